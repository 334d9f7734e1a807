package locrisk_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The dependency rules of docs/architecture.md, checked on the module as
// it is: the domain imports nothing of the module, only the assembly
// imports a store (SQLite's or PostgreSQL's), and no store links the
// engine or the other store.
func TestDependenciesPointInward(t *testing.T) {
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("need the go command")
	}
	out, err := exec.Command(gotool, "list", "-json=ImportPath,Imports,Deps", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const (
		module = "github.com/locrisk/locrisk"
		sqlite = module + "/internal/sqlite"
		pg     = module + "/internal/pgstore"
		engine = module + "/internal/risk"
	)
	type pkg struct {
		ImportPath    string
		Imports, Deps []string
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs[p.ImportPath] = p
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	for path, p := range pkgs {
		for _, st := range []string{sqlite, pg} {
			if slices.Contains(p.Imports, st) && path != module+"/cmd/locrisk" {
				t.Errorf("%s imports the store %s; only the assembly (cmd/locrisk) may", path, st)
			}
		}
	}
	for _, st := range []string{sqlite, pg} {
		if _, ok := pkgs[st]; !ok {
			t.Errorf("package %s not found", st)
		}
		for _, dep := range pkgs[st].Deps {
			if dep == engine || strings.HasPrefix(dep, engine+"/") || dep == sqlite || dep == pg {
				t.Errorf("the store %s links %s", st, dep)
			}
		}
	}
	for _, dep := range pkgs[module].Deps {
		if strings.HasPrefix(dep, module+"/") {
			t.Errorf("the domain imports %s", dep)
		}
	}
	// What receivers and auditors import builds on the standard library
	// alone (the consumer-module tests in e2e check the build too).
	for _, public := range []string{"webhookverify", "reportverify"} {
		for _, dep := range pkgs[module+"/"+public].Deps {
			if strings.Contains(strings.Split(dep, "/")[0], ".") {
				t.Errorf("%s depends on %s, outside the standard library", public, dep)
			}
		}
	}
	for _, consumer := range []string{"internal/server", "internal/jobs", "internal/webhookworker", "internal/outbox",
		"internal/retention", "internal/metrics", "internal/portfolio", "internal/batchcsv", "internal/signing",
		"internal/replay", "internal/view"} {
		p, ok := pkgs[module+"/"+consumer]
		if !ok {
			t.Errorf("package %s not found", consumer)
			continue
		}
		for _, st := range []string{sqlite, pg} {
			if slices.Contains(p.Deps, st) {
				t.Errorf("%s depends on the store %s", consumer, st)
			}
		}
	}
}
