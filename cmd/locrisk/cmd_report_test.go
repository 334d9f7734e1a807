package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/sqlite"
	"github.com/locrisk/locrisk/reportverify"
)

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "report.db")
	env := map[string]string{"LOCRISK_DB": db, "LOCRISK_DATA_DIR": fixtureData}
	acct := strings.TrimSpace(cmd(t, env, "accounts", "create", "--name", "Operator", "--monthly-quota", "3").stdout)
	if !strings.HasPrefix(acct, "acct_") {
		t.Fatalf("no account: %q", acct)
	}
	chicago := []string{"41.8781", "-87.6298"}

	// --json: the API's summary shape, for a job in the manual bucket.
	r := cmd(t, env, append([]string{"report", "--account", acct, "--json"}, chicago...)...)
	if r.code != 0 {
		t.Fatalf("report --json: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	var v struct {
		APIVersion, Detail, ReportID, JobID, DataVersion string
		Location                                         struct{ CountyFIPS string }
		Summary                                          struct {
			OverallScore *int
			RiskLevel    string
			Links        struct{ Self, PDF string }
		}
		Report json.RawMessage
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
	if v.APIVersion != "v1" || v.Detail != "summary" || v.Location.CountyFIPS != "17031" || v.Summary.OverallScore == nil ||
		v.Summary.RiskLevel == "" || v.Summary.Links.Self != "/api/v1/location-risk/reports/"+v.ReportID || v.Report != nil {
		t.Errorf("summary = %+v", v)
	}
	if !strings.Contains(r.stdout, "\n  \"") {
		t.Errorf("JSON is not indented:\n%s", r.stdout)
	}
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Signed with the database's key, as the API signs (docs/verification.md).
	signingKeys, err := st.ListSigningKeys(context.Background())
	if err != nil || len(signingKeys) != 1 {
		t.Fatalf("signing keys %v %v", signingKeys, err)
	}
	if _, err := reportverify.Verify([]byte(r.stdout), reportverify.NewKeySet(reportverify.Key{ID: signingKeys[0].ID, PublicKey: signingKeys[0].PublicKey})); err != nil {
		t.Errorf("the printed JSON does not verify: %v", err)
	}
	job, err := st.GetJob(context.Background(), acct, v.JobID)
	if err != nil || job.Bucket != locrisk.BucketManual || job.Status != locrisk.StatusCompleted || job.ReportID == nil || *job.ReportID != v.ReportID {
		t.Errorf("job = %+v, %v; want a completed manual job with report %s", job, err, v.ReportID)
	}

	// The engine kept its reference distributions in the database, so the
	// next run does not rebuild them.
	var cached int
	raw, err := sqlx.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if err := raw.GetContext(context.Background(), &cached, `SELECT COUNT(*) FROM reference_cache`); err != nil || cached != 1 {
		t.Errorf("%d cached references (err %v), want 1", cached, err)
	}

	// Text by default; --pdf also writes the PDF. Flags may follow the
	// coordinates, and the negative longitude is not a flag.
	pdfPath := filepath.Join(dir, "chicago.pdf")
	r = cmd(t, env, append(append([]string{"report"}, chicago...), "--account", acct, "--pdf", pdfPath)...)
	if r.code != 0 {
		t.Fatalf("report --pdf: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"Report", "Overall", "/100", ", driven by ", "Modules", "hydrology", "county 17031", "Perils", "riverine flooding",
		"Outlook", "hazard multipliers, late century, higher warming (FEMA NRI Future Risk, county, context only): coastal flooding "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("text summary lacks %q:\n%s", want, r.stdout)
		}
	}
	doc, err := os.ReadFile(pdfPath)
	if err != nil || !bytes.HasPrefix(doc, []byte("%PDF-")) {
		t.Errorf("PDF file: %v, starts %q", err, doc[:min(len(doc), 8)])
	}

	// Outside coverage: refused before queueing, no quota used.
	r = cmd(t, env, "report", "--account", acct, "48.8566", "2.3522")
	if r.code != exitError || !strings.Contains(r.stderr, "unsupported_location") {
		t.Errorf("outside coverage: exit %d, stderr %s", r.code, r.stderr)
	}
	// Third job fits the quota of 3; the fourth does not.
	if r = cmd(t, env, append([]string{"report", "--account", acct}, chicago...)...); r.code != 0 {
		t.Fatalf("third report: exit %d %s", r.code, r.stderr)
	}
	r = cmd(t, env, append([]string{"report", "--account", acct}, chicago...)...)
	if r.code != exitError || !strings.Contains(r.stderr, "quota_exceeded") || r.stdout != "" {
		t.Errorf("over quota: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	hist, err := st.UsageHistory(context.Background(), acct, job.CreatedUTC, 1, []string{locrisk.BucketManual})
	if err != nil || len(hist) != 1 || hist[0].ReportJobs != 3 || hist[0].Completed != 3 {
		t.Errorf("manual usage = %+v, %v; want 3 created, 3 completed", hist, err)
	}

	r = cmd(t, env, "report", "--account", "acct_nosuchaccountnosuchacc", "41.8781", "-87.6298")
	if r.code != exitError || !strings.Contains(r.stderr, "not found") {
		t.Errorf("unknown account: exit %d, %s", r.code, r.stderr)
	}
}

func TestReportCommandUsageErrors(t *testing.T) {
	env := map[string]string{"LOCRISK_DB": filepath.Join(t.TempDir(), "x.db"), "LOCRISK_DATA_DIR": fixtureData}
	tests := [][]string{
		{"report", "41.8", "-87.6"},                        // no account
		{"report", "--account", "acct_x", "41.8"},          // one coordinate
		{"report", "--account", "acct_x", "1", "2", "3"},   // three
		{"report", "--account", "acct_x", "91", "-87.6"},   // latitude out of range
		{"report", "--account", "acct_x", "41.8", "-181"},  // longitude out of range
		{"report", "--account", "acct_x", "NaN", "-87.6"},  // not a number
		{"report", "--account", "acct_x", "north", "west"}, // not numbers
		{"report", "--account", "acct_x", "--bogus", "41.8", "-87.6"},
		{"report", "--account", "acct_x", "--timeout", "0s", "41.8", "-87.6"},
	}
	for _, args := range tests {
		if r := cmd(t, env, args...); r.code != exitUsage {
			t.Errorf("%v: exit %d, want %d; stderr %s", args, r.code, exitUsage, r.stderr)
		}
	}
	if _, err := os.Stat(env["LOCRISK_DB"]); !os.IsNotExist(err) {
		t.Errorf("a usage error created the database file (%v)", err)
	}
	if r := cmd(t, env, "report", "--account", "acct_x", "41.8"); !strings.Contains(r.stderr, "got 1 argument\n") {
		t.Errorf("one coordinate: stderr %q, want \"got 1 argument\"", r.stderr)
	}
	for _, args := range [][]string{{"keys", "revoke", "a", "b"}, {"accounts", "disable", "a", "b"}, {"accounts", "enable", "a", "b"}} {
		if r := cmd(t, env, args...); !strings.Contains(r.stderr, "got 2 arguments\n") {
			t.Errorf("%v: stderr %q", args, r.stderr)
		}
	}
	if r := cmd(t, env, "report", "-h"); r.code != exitOK || !strings.Contains(r.stdout, "manual") {
		t.Errorf("report -h: exit %d, stdout %s", r.code, r.stdout)
	}
}

func TestPositionalsLast(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.String("account", "", "")
	fs.Bool("json", false, "")
	tests := []struct{ in, want []string }{
		{[]string{"--account", "a", "41.8", "-87.6"}, []string{"--account", "a", "--", "41.8", "-87.6"}},
		{[]string{"-33.9", "151.2", "--json", "--account=a"}, []string{"--json", "--account=a", "--", "-33.9", "151.2"}},
		{[]string{"--json", "41", "--account", "-a", "-87"}, []string{"--json", "--account", "-a", "--", "41", "-87"}},
		{[]string{"--unknown", "1", "-2"}, []string{"--unknown", "--", "1", "-2"}},
		{[]string{"1", "--", "-x"}, []string{"--", "1", "-x"}},
		{[]string{"-33.9,151.2", "--account", "a"}, []string{"--account", "a", "--", "-33.9,151.2"}},
		{[]string{"--account", "a", "-33.9,", "-151.2"}, []string{"--account", "a", "--", "-33.9,", "-151.2"}},
		{[]string{"-x,1"}, []string{"-x,1", "--"}},
	}
	for _, tc := range tests {
		if got := positionalsLast(fs, tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("positionalsLast(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCoordinateArgs(t *testing.T) {
	tests := []struct {
		in   []string
		want [2]string
		err  string
	}{
		{[]string{"41.8", "-87.6"}, [2]string{"41.8", "-87.6"}, ""},
		{[]string{"41.8,-87.6"}, [2]string{"41.8", "-87.6"}, ""},
		{[]string{"-33.9, 151.2"}, [2]string{"-33.9", "151.2"}, ""},
		{[]string{"41.8,", "-87.6"}, [2]string{"41.8", "-87.6"}, ""}, // an unquoted "41.8, -87.6"
		{[]string{"41.8"}, [2]string{}, "got 1 argument"},
		{nil, [2]string{}, "got 0 arguments"},
		{[]string{"1", "2", "3"}, [2]string{}, "got 3 arguments"},
		{[]string{"1,2,3"}, [2]string{}, "got 1 argument"},
		{[]string{"1,2", "3"}, [2]string{}, "got 2 arguments"},
	}
	for _, tt := range tests {
		got, err := coordinateArgs(tt.in)
		switch {
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("coordinateArgs(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		case tt.err != "" && (err == nil || !strings.HasSuffix(err.Error(), tt.err)):
			t.Errorf("coordinateArgs(%q) error %v, want one ending %q", tt.in, err, tt.err)
		}
	}
}
