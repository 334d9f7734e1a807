package main

// `locrisk version`.

import (
	"fmt"
	"runtime"

	"github.com/locrisk/locrisk/datapack"
	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/version"
)

func (c *cli) version(args []string) error {
	var asJSON bool
	f := c.newFlags("version", "[--json]", `
Prints the version of this binary: the same value GET /readyz reports and
every response carries in its Server header (locrisk/<version>). A release
build sets it with -ldflags "-X github.com/locrisk/locrisk/internal/version.release=1.4.0"; otherwise
it is the module version, the VCS revision the binary was built from
("-dirty" with uncommitted changes), or "dev". The second line is the
version of the data built into the binary (docs/data.md), which reports
carry as dataVersion when no --data-dir is given.`, `
  locrisk version
  locrisk version --json`)
	f.BoolVar(&asJSON, "json", false, `print {"version", "go", "data"} as JSON`)
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	v := version.String()
	m, err := data.ReadManifest(datapack.FS())
	if err != nil {
		return fmt.Errorf("the built-in data: %w", err)
	}
	if asJSON {
		return writeJSON(c.stdout, struct {
			Version string `json:"version"`
			Go      string `json:"go"`
			Data    string `json:"data"`
		}{v, runtime.Version(), m.Version()})
	}
	_, err = fmt.Fprintf(c.stdout, "locrisk %s\nbuilt-in data %s\n", v, m.Version())
	return err
}
