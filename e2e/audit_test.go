package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAuditTrail runs what an auditor does, through the real
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
	checkPDFPages(t, dir, keys, pdf)

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
	if r := runCLI(t, nil, append([]string{"report", "replay"}, append(data, full)...)...); r.code != 0 || !strings.HasPrefix(r.stdout, "identical") ||
		!strings.Contains(r.stdout, ", as the report records") {
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

// checkPDFPages: `report verify` on the served PDF checks its pages too,
// since a reader trusts what the pages show, not only the attachment. It
// says so; a rewrite by qpdf that keeps what the file holds
// still verifies; a page edited, an incremental update appended or the
// attachment removed fails with the reason; --attachment-only checks the
// carried JSON and says the pages were not.
func checkPDFPages(t *testing.T, dir, keys, pdf string) {
	t.Helper()
	verify := func(file string, flags ...string) cliResult {
		return runCLI(t, nil, append(append([]string{"report", "verify", "--keys", keys}, flags...), file)...)
	}
	if r := verify(pdf); r.code != 0 || !strings.Contains(r.stdout, "pages:") || !strings.Contains(r.stdout, "their signature holds") {
		t.Errorf("verify the PDF: %s", r)
	}
	if r := verify(pdf, "--attachment-only"); r.code != 0 || !strings.Contains(r.stdout, "pages:        not checked") {
		t.Errorf("verify --attachment-only: %s", r)
	}
	served, err := os.ReadFile(pdf)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	// An incremental update: one object added, with its own
	// cross-reference section and a trailer pointing to the previous.
	tail := served[bytes.LastIndex(served, []byte("trailer")):]
	field := func(key string) string {
		i := bytes.Index(tail, []byte(key))
		if i < 0 {
			t.Fatalf("no %s in the trailer", key)
		}
		return strings.Fields(string(tail[i+len(key):]))[0]
	}
	start := strings.Fields(string(served[bytes.LastIndex(served, []byte("startxref"))+len("startxref"):]))[0]
	upd := append(bytes.Clone(served), "\n9999 0 obj\n(an annotation)\nendobj\n"...)
	xref := len(upd)
	upd = append(upd, "xref\n9999 1\n"+strings.Repeat("0", 10)+" 00000 n \ntrailer\n<< /Size 10000 /Root "+field("/Root")+" 0 R /Prev "+start+" >>\nstartxref\n"+
		strconv.Itoa(xref)+"\n%%EOF\n"...)
	if r := verify(write("updated.pdf", upd)); r.code != 1 || !strings.Contains(r.stderr, "incremental update") ||
		!strings.Contains(r.stderr, "attached JSON verifies") {
		t.Errorf("verify a PDF with an incremental update: %s", r)
	}
	stripped := bytes.Replace(served, []byte("/EmbeddedFiles"), []byte("/EmbeddedFilez"), 1)
	if r := verify(write("stripped.pdf", stripped)); r.code != 1 || !strings.Contains(r.stderr, "no embedded JSON") {
		t.Errorf("verify a PDF without its attachment: %s", r)
	}
	if _, err := exec.LookPath("qpdf"); err != nil {
		return
	}
	// qpdf rewrites the file (objects renumbered, streams stored
	// uncompressed): the pages are the same and still verify.
	plain := filepath.Join(dir, "plain.pdf")
	if out, err := exec.Command("qpdf", "--stream-data=uncompress", "--object-streams=disable", pdf, plain).CombinedOutput(); err != nil {
		t.Fatalf("qpdf: %v\n%s", err, out)
	}
	if r := verify(plain); r.code != 0 || !strings.Contains(r.stdout, "their signature holds") {
		t.Errorf("verify the PDF rewritten by qpdf: %s", r)
	}
	// One number of the first text position in the file changed.
	b, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte("\nBT"))
	for i > 0 && i < len(b) && (b[i] < '1' || b[i] > '8') {
		i++
	}
	if i <= 0 || i >= len(b) {
		t.Fatal("no text position found in the rewritten PDF")
	}
	b[i]++
	if r := verify(write("edited.pdf", b)); r.code != 1 || !strings.Contains(r.stderr, "differs") {
		t.Errorf("verify a PDF with page 1 edited: %s", r)
	}
}
