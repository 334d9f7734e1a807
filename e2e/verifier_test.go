package e2e

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/webhook"
)

// The verifier is the package webhookverify/ of this repository's module
// (docs/webhooks.md, In Go).
const (
	module          = "github.com/locrisk/locrisk"
	verifierPackage = module + "/webhookverify"
)

// goCmd runs the go command in dir, offline: no proxy, no workspace, the
// toolchain that runs the tests.
func goCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("need the go command")
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

// Another module imports the verifier by the steps docs/webhooks.md gives
// for a local checkout (go mod edit -replace, then go get), offline, and
// verifies a delivery signed by the service's own signing code. The
// receiver builds the verifier's package alone: nothing but the standard
// library is compiled into it.
func TestVerifierImportsFromAnotherModule(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	goCmd(t, dir, "mod", "init", "example.com/receiver")
	goCmd(t, dir, "mod", "edit", "-replace", module+"="+root)
	goCmd(t, dir, "get", verifierPackage)
	main := `package main

import (
	"fmt"
	"os"
	"time"

	"` + verifierPackage + `"
)

// receiver SECRET TIMESTAMP SIGNATURE BODY WEBHOOK-ID WEBHOOK-SIGNATURE
func main() {
	secret, ts, sig, body := os.Args[1], os.Args[2], os.Args[3], os.Args[4]
	id, stdSig := os.Args[5], os.Args[6]
	err := webhookverify.Verify(secret, ts, sig, []byte(body), time.Now(), webhookverify.DefaultTolerance)
	fmt.Println("verify:", err)
	err = webhookverify.VerifyStandard(secret, id, ts, stdSig, []byte(body), time.Now(), webhookverify.DefaultTolerance)
	fmt.Println("standard:", err)
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	deps := strings.Fields(goCmd(t, dir, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "."))
	if want := []string{verifierPackage, "example.com/receiver"}; strings.Join(deps, " ") != strings.Join(want, " ") {
		t.Errorf("the receiver compiles %v beyond the standard library, want only %v", deps, want)
	}
	const secret = "whsec_C0nsumer0Secret0Of0Forty0Base62Chars0000"
	const id = "evt_1"
	body := `{"id":"evt_1","type":"webhook.test","apiVersion":"v1","createdUtc":"2026-11-22T10:00:00Z","data":{"endpointId":"we_1"}}`
	ts := time.Now().Unix()
	sig := webhook.Sign(secret, ts, []byte(body))
	stdSig, err := webhook.SignStandard(secret, id, ts, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	tsArg := strconv.FormatInt(ts, 10)
	if out := goCmd(t, dir, "run", ".", secret, tsArg, sig, body, id, stdSig); strings.TrimSpace(out) != "verify: <nil>\nstandard: <nil>" {
		t.Errorf("a genuine signature: %s", out)
	}
	if out := goCmd(t, dir, "run", ".", secret, tsArg, sig, body+" ", id, stdSig); strings.Count(out, "signature does not match") != 2 {
		t.Errorf("a changed body: %s", out)
	}
}

// An auditor's module imports reportverify the same way, offline, builds
// nothing but it and the standard library, and checks reports the real
// binary signed: the JSON and the PDF's attachment verify with
// the published key set and with a PEM key alone; a report changed in a
// single byte does not.
func TestReportVerifierImportsFromAnotherModule(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	const pkg = module + "/reportverify"
	dir := t.TempDir()
	goCmd(t, dir, "mod", "init", "example.com/auditor")
	goCmd(t, dir, "mod", "edit", "-replace", module+"="+root)
	goCmd(t, dir, "get", pkg)
	main := `package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"` + pkg + `"
)

// auditor KEYS REPORT: KEYS is a published key set (.json) or one PEM
// key (.pem); REPORT a signed JSON report or a PDF report.
func main() {
	keysData, _ := os.ReadFile(os.Args[1])
	doc, _ := os.ReadFile(os.Args[2])
	var keys reportverify.KeySet
	var err error
	if strings.HasSuffix(os.Args[1], ".pem") {
		keys, err = reportverify.ParsePublicKeyPEM(keysData, "")
	} else {
		keys, err = reportverify.ParseKeySet(keysData)
	}
	if err != nil {
		fmt.Println("keys:", err)
		return
	}
	if bytes.HasPrefix(doc, []byte("%PDF-")) {
		if doc, err = reportverify.FromPDF(doc); err != nil {
			fmt.Println("pdf:", err)
			return
		}
	}
	res, err := reportverify.Verify(doc, keys)
	fmt.Println("verify:", res.KeyID, len(res.SignedSHA256), err)
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	deps := strings.Fields(goCmd(t, dir, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "."))
	if want := []string{pkg, "example.com/auditor"}; strings.Join(deps, " ") != strings.Join(want, " ") {
		t.Errorf("the auditor compiles %v beyond the standard library, want only %v", deps, want)
	}
	goCmd(t, dir, "build", "-o", "auditor", ".")
	auditor := func(keysFile, docFile string) string {
		t.Helper()
		out, err := exec.Command(filepath.Join(dir, "auditor"), keysFile, docFile).CombinedOutput()
		if err != nil {
			t.Fatalf("auditor: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}

	// Reports signed by the real binary, and its published keys.
	db := filepath.Join(dir, "audit.db")
	_, key := newAccountKey(t, db, "reports:create,reports:read,reports:pdf")
	srv := startServer(t, nil, serveArgs(db)...)
	job := srv.waitJob(t, key, srv.createJob(t, key, point{name: "SF", lat: 37.7749, lon: -122.4194}), 30*time.Second)
	if job.Result == nil {
		t.Fatalf("job %+v", job)
	}
	save := func(name, path, key string) (string, []byte) {
		t.Helper()
		r := srv.do(t, key, "GET", path, nil)
		if r.status != 200 {
			t.Fatalf("GET %s: %d %s", path, r.status, r.body)
		}
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, r.body, 0o644); err != nil {
			t.Fatal(err)
		}
		return f, r.body
	}
	docFile, report := save("report.json", job.Result.ReportURL, key)
	pdfFile, _ := save("report.pdf", job.Result.ReportURL+"/pdf", key)
	keysFile, keysJSON := save("keys.json", "/.well-known/locrisk-signing-keys", "")
	var published struct {
		Keys []struct{ PublicKey string }
	}
	if err := json.Unmarshal(keysJSON, &published); err != nil || len(published.Keys) != 1 {
		t.Fatalf("keys: %s (%v)", keysJSON, err)
	}
	raw, _ := base64.StdEncoding.DecodeString(published.Keys[0].PublicKey)
	der, err := x509.MarshalPKIXPublicKey(ed25519.PublicKey(raw))
	if err != nil {
		t.Fatal(err)
	}
	pemFile := filepath.Join(dir, "key.pem")
	os.WriteFile(pemFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644)

	for _, c := range []struct{ keys, doc string }{{keysFile, docFile}, {keysFile, pdfFile}, {pemFile, docFile}, {pemFile, pdfFile}} {
		if out := auditor(c.keys, c.doc); !strings.HasPrefix(out, "verify: lrs-") || !strings.HasSuffix(out, " 64 <nil>") {
			t.Errorf("a genuine report (%s, %s): %s", filepath.Base(c.keys), filepath.Base(c.doc), out)
		}
	}
	i := strings.Index(string(report), `"countyName":"`) + len(`"countyName":"`)
	report[i] ^= 0x01
	os.WriteFile(docFile, report, 0o644)
	if out := auditor(keysFile, docFile); !strings.Contains(out, "does not match") {
		t.Errorf("a report changed in one byte: %s", out)
	}
}
