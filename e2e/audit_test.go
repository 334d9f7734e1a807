package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAuditTrail (issue 29) runs what an auditor does, through the real
// binary: a report fetched from the API and saved verifies offline with
// only the published keys, and fails once any byte of it is changed; the
// PDF passes qpdf --check, shows its verification line and its attached
// JSON verifies; replay of the saved report is identical with this binary
// and data, and names the field a forger changed; after a key rotation the
// old report still verifies and the new key signs.
func TestAuditTrail(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "audit.db")
	_, key := newAccountKey(t, db, "reports:create,reports:read,reports:pdf")
	srv := startServer(t, nil, serveArgs(db)...)
	id := srv.createJob(t, key, point{name: "SF", lat: 37.7749, lon: -122.4194})
	job := srv.waitJob(t, key, id, 30*time.Second)
	if job.Status != "completed" {
		t.Fatalf("job %s", job.Status)
	}
	reportPath := jobsPath[:strings.LastIndex(jobsPath, "/")] + "/reports/" + job.Result.ReportID
	save := func(name, path string) string {
		t.Helper()
		r := srv.do(t, key, "GET", path, nil)
		if r.status != 200 {
			t.Fatalf("GET %s: %d %s", path, r.status, r.body)
		}
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, r.body, 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	summary := save("summary.json", reportPath)
	full := save("full.json", reportPath+"?detail=full")
	pdf := save("report.pdf", reportPath+"/pdf")
	keys := save("keys.json", "/.well-known/locrisk-signing-keys")
	data := []string{"--data-dir", fixtureData}

	for _, f := range []string{summary, full, pdf} {
		r := runCLI(t, nil, "report", "verify", "--keys", keys, f)
		if r.code != 0 || !strings.Contains(r.stdout, "verified:") || !strings.Contains(r.stdout, "signed by:") {
			t.Errorf("verify %s: %s", filepath.Base(f), r)
		}
	}
	// One byte changed: a digit of the overall score.
	doc, _ := os.ReadFile(summary)
	i := bytes.Index(doc, []byte(`"overallScore":`)) + len(`"overallScore":`)
	forged := bytes.Clone(doc)
	forged[i] = '0' + (doc[i]-'0'+1)%10
	forgedFile := filepath.Join(dir, "forged.json")
	os.WriteFile(forgedFile, forged, 0o644)
	if r := runCLI(t, nil, "report", "verify", "--keys", keys, forgedFile); r.code != 1 || !strings.Contains(r.stderr, "does not verify") {
		t.Errorf("verify a forged report: %s", r)
	}
	// A PEM key alone verifies too, and openssl agrees on the signed bytes.
	pemOut := mustCLI(t, map[string]string{"LOCRISK_DB": db}, "signing-keys", "list", "--pem")
	pemFile := filepath.Join(dir, "key.pem")
	os.WriteFile(pemFile, []byte(pemOut+"\n"), 0o644)
	if r := runCLI(t, nil, "report", "verify", "--key", pemFile, full); r.code != 0 {
		t.Errorf("verify with a PEM key: %s", r)
	}
	if _, err := exec.LookPath("openssl"); err == nil {
		signed := runCLI(t, nil, "report", "verify", "--print-signed-bytes", full)
		signedFile, sigFile := filepath.Join(dir, "signed.bin"), filepath.Join(dir, "sig.bin")
		os.WriteFile(signedFile, []byte(signed.stdout), 0o644)
		var v struct{ Signature struct{ Value string } }
		decodeJSONFile(t, full, &v)
		os.WriteFile(sigFile, decodeBase64(t, v.Signature.Value), 0o644)
		out, err := exec.Command("openssl", "pkeyutl", "-verify", "-pubin", "-inkey", pemFile, "-rawin", "-in", signedFile, "-sigfile", sigFile).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Signature Verified Successfully") {
			t.Errorf("openssl: %v %s", err, out)
		}
	}
	if _, err := exec.LookPath("qpdf"); err == nil {
		if out, err := exec.Command("qpdf", "--check", pdf).CombinedOutput(); err != nil {
			t.Errorf("qpdf --check: %v\n%s", err, out)
		}
	}
	if _, err := exec.LookPath("pdftotext"); err == nil {
		out, err := exec.Command("pdftotext", pdf, "-").Output()
		if err != nil || !strings.Contains(string(out), "Provenance and verification") || !strings.Contains(string(out), "Signed by locrisk key") {
			t.Errorf("the PDF shows no verification line: %v", err)
		}
	}

	// Replay: identical with this binary and data; a forged score is named.
	if r := runCLI(t, nil, append([]string{"report", "replay"}, append(data, full)...)...); r.code != 0 || !strings.HasPrefix(r.stdout, "identical") {
		t.Errorf("replay: %s", r)
	}
	if r := runCLI(t, nil, append([]string{"report", "replay"}, append(data, pdf)...)...); r.code != 0 || !strings.HasPrefix(r.stdout, "identical") {
		t.Errorf("replay of the PDF: %s", r)
	}
	if r := runCLI(t, nil, append([]string{"report", "replay"}, append(data, forgedFile)...)...); r.code != 1 || !strings.Contains(r.stdout, "$.summary.overallScore") {
		t.Errorf("replay of a forged report: %s", r)
	}

	// Rotation while the server runs.
	srv.signal(os.Interrupt)
	rotated := mustCLI(t, map[string]string{"LOCRISK_DB": db}, "signing-keys", "rotate")
	srv = startServer(t, nil, serveArgs(db)...)
	newKeys := filepath.Join(dir, "keys2.json")
	r := srv.do(t, "", "GET", "/.well-known/locrisk-signing-keys", nil)
	os.WriteFile(newKeys, r.body, 0o644)
	if r := runCLI(t, nil, "report", "verify", "--keys", newKeys, summary); r.code != 0 || !strings.Contains(r.stdout, "retired") {
		t.Errorf("the old report after rotation: %s", r)
	}
	again := srv.do(t, key, "GET", reportPath, nil)
	os.WriteFile(filepath.Join(dir, "again.json"), again.body, 0o644)
	if r := runCLI(t, nil, "report", "verify", "--keys", newKeys, filepath.Join(dir, "again.json")); r.code != 0 || !strings.Contains(r.stdout, rotated) {
		t.Errorf("the report served after rotation is not signed by %s: %s", rotated, r)
	}
}

func decodeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func decodeBase64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
