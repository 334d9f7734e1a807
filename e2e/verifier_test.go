package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/webhook"
)

// verifierModule is the module path of webhookverify/ (its go.mod).
const verifierModule = "github.com/locrisk/locrisk/webhookverify"

// goCmd runs the go command in dir, offline: no proxy, no workspace, the
// toolchain that runs the tests.
func goCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is needed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, gotool, args...)
	cmd.Dir = dir
	cmd.Env = append(childEnv(nil), "GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// The receiver module's own tests run with the repository's: `go test ./...`
// at the root does not descend into a nested module, so this test runs
// them.
func TestVerifierModuleTests(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	out := goCmd(t, filepath.Join(root, "webhookverify"), "test", "-count=1", "./...")
	if !strings.Contains(out, "ok  \t"+verifierModule) {
		t.Errorf("webhookverify tests did not report ok:\n%s", out)
	}
}

// Another module imports the verifier by the steps docs/webhooks.md gives
// for a local checkout (go mod edit -replace, then go get), offline, and
// verifies a delivery signed by the service's own signing code.
func TestVerifierImportsFromAnotherModule(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	goCmd(t, dir, "mod", "init", "example.com/receiver")
	goCmd(t, dir, "mod", "edit", "-replace", verifierModule+"="+filepath.Join(root, "webhookverify"))
	goCmd(t, dir, "get", verifierModule)
	main := `package main

import (
	"fmt"
	"os"
	"time"

	"` + verifierModule + `"
)

func main() {
	secret, ts, sig, body := os.Args[1], os.Args[2], os.Args[3], os.Args[4]
	err := webhookverify.Verify(secret, ts, sig, []byte(body), time.Now(), webhookverify.DefaultTolerance)
	fmt.Println("verify:", err)
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	const secret = "whsec_consumer"
	body := `{"id":"evt_1","type":"webhook.test","apiVersion":"v1","createdUtc":"2026-11-22T10:00:00Z","data":{"endpointId":"we_1"}}`
	ts := time.Now().Unix()
	sig := webhook.Sign(secret, ts, []byte(body))
	tsArg := strconv.FormatInt(ts, 10)
	if out := goCmd(t, dir, "run", ".", secret, tsArg, sig, body); strings.TrimSpace(out) != "verify: <nil>" {
		t.Errorf("a genuine signature: %s", out)
	}
	if out := goCmd(t, dir, "run", ".", secret, tsArg, sig, body+" "); !strings.Contains(out, "signature does not match") {
		t.Errorf("a changed body: %s", out)
	}
}
