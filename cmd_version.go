package main

// `locrisk version`.

import (
	"fmt"
	"runtime"

	"locrisk/version"
)

func (c *cli) version(args []string) error {
	var asJSON bool
	f := c.newFlags("version", "[--json]", `
Prints the version of this binary: the same value GET /readyz reports and
every response carries in its Server header (locrisk/<version>). A release
build sets it with -ldflags "-X locrisk/version.release=1.4.0"; otherwise
it is the module version, the VCS revision the binary was built from
("-dirty" with uncommitted changes), or "dev".`, `
  locrisk version
  locrisk version --json`)
	f.BoolVar(&asJSON, "json", false, `print {"version", "go"} as JSON`)
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	v := version.String()
	if asJSON {
		return writeJSON(c.stdout, struct {
			Version string `json:"version"`
			Go      string `json:"go"`
		}{v, runtime.Version()})
	}
	_, err := fmt.Fprintf(c.stdout, "locrisk %s\n", v)
	return err
}
