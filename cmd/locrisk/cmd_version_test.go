package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/locrisk/locrisk/datapack"
	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/version"
)

func TestVersionCommand(t *testing.T) {
	want := version.String()
	m, err := data.ReadManifest(datapack.FS())
	if err != nil {
		t.Fatal(err)
	}
	r := cmd(t, nil, "version")
	if r.code != 0 || r.stdout != "locrisk "+want+"\nbuilt-in data "+m.Version()+"\n" {
		t.Errorf("version: %+v, want %q and the data version %s", r, "locrisk "+want, m.Version())
	}
	r = cmd(t, nil, "version", "--json")
	var got struct{ Version, Go, Data string }
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || got.Version != want || got.Go != runtime.Version() || got.Data != m.Version() {
		t.Errorf("version --json printed %q (%v)", r.stdout, err)
	}
	if r := cmd(t, nil, "version", "extra"); r.code != 2 {
		t.Errorf("version extra: exit %d, want 2", r.code)
	}
	if r := cmd(t, nil, "-h"); !strings.Contains(r.stdout, "version") {
		t.Error("top-level help does not list version")
	}
}
