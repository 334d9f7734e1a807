package main

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk/internal/risk"
)

// TestScoreCommand scores a small file on the fixture data and checks the
// output against the engine itself, the bad rows and the summary.
func TestScoreCommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "portfolio.csv")
	out := filepath.Join(dir, "scored.csv")
	const input = "\uFEFFpolicy,Latitude,externalId,longitude\r\n" +
		"P-1,41.8781,chicago,-87.6298\r\n" +
		"P-2,25.7617,miami,-80.1918\r\n" +
		"P-3,95,north,0\r\n" +
		"P-4,10,sea,10\r\n" +
		"P-5,41.8781\r\n"
	if err := os.WriteFile(in, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	r := cmd(t, map[string]string{"LOCRISK_DATA_DIR": fixtureData, "LOCRISK_WORKERS": "2"}, "score", "--in", in, "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"rows      5\n", "scored    2\n", "rejected  3 (invalid_latitude 1, invalid_row 1, unsupported_location 1)\n", "failed    0\n", "rows/s\n"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("summary lacks %q:\n%s", want, r.stderr)
		}
	}
	if r.stdout != "" || strings.Contains(r.stderr, "\r") {
		t.Errorf("stdout %q; stderr (no terminal, so no bar) %q", r.stdout, r.stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 6 || recs[0][len(recs[0])-1] != "policy" {
		t.Fatalf("records %q", recs)
	}
	for _, h := range recs[0] {
		if strings.HasPrefix(h, "outlook.") {
			t.Errorf("column %s without --outlook", h)
		}
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}

	// The scored rows are what the engine says, cell for cell.
	eng, err := risk.Load(context.Background(), os.DirFS(fixtureData), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range recs[1:3] {
		lat, _ := strconv.ParseFloat(row[col["latitude"]], 64)
		lon, _ := strconv.ParseFloat(row[col["longitude"]], 64)
		a, err := eng.Assess(context.Background(), lat, lon)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{
			"status": "completed", "score": strconv.Itoa(a.Summary.OverallScore), "riskLevel": a.Summary.RiskLevel,
			"state": a.Location.StateCode, "countyFips": a.Location.CountyFIPS, "county": a.Location.CountyName,
		}
		for _, m := range a.Summary.ModuleScores {
			want[m.Module] = intCell(m.Value)
		}
		for _, m := range a.Summary.Perils {
			for _, p := range m.Value {
				want[m.Module+"."+p.Peril] = intCell(p.Score)
				level := ""
				if p.RiskLevel != nil {
					level = *p.RiskLevel
				}
				want[m.Module+"."+p.Peril+".riskLevel"] = level
			}
		}
		for k, v := range want {
			if i, ok := col[k]; !ok || row[i] != v {
				t.Errorf("%s: %s = %q, want %q", row[col["externalId"]], k, row[min(i, len(row)-1)], v)
			}
		}
	}
	if got := recs[1][col["countyFips"]]; got != "17031" {
		t.Errorf("Chicago in county %q", got)
	}
	for i, want := range []struct{ id, code, policy string }{
		{"north", "invalid_latitude", "P-3"}, {"sea", "unsupported_location", "P-4"}, {"", "invalid_row", "P-5"},
	} {
		row := recs[i+3]
		if row[col["externalId"]] != want.id || row[col["status"]] != "rejected" || row[col["errorCode"]] != want.code ||
			row[col["errorMessage"]] == "" || row[col["policy"]] != want.policy || row[col["score"]] != "" {
			t.Errorf("row %d = %q, want %+v", i+3, row, want)
		}
	}
}

// TestScoreCommandOutlook: --outlook adds the outlook's columns, cell for
// cell the engine's outlook, and empty where it is null (Miami has no row
// in the fixture table).
func TestScoreCommandOutlook(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "portfolio.csv")
	if err := os.WriteFile(in, []byte("externalId,latitude,longitude\nchicago,41.8781,-87.6298\nmiami,25.7617,-80.1918\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "scored.csv")
	r := cmd(t, map[string]string{"LOCRISK_DATA_DIR": fixtureData}, "score", "--outlook", "--in", in, "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr %s", r.code, r.stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) != 3 {
		t.Fatalf("records %q (%v)", recs, err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	eng, err := risk.Load(context.Background(), os.DirFS(fixtureData), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := eng.Assess(context.Background(), 41.8781, -87.6298)
	if err != nil {
		t.Fatal(err)
	}
	o := a.Report.Outlook.Value
	if o == nil {
		t.Fatal("the fixture engine gives Chicago no outlook")
	}
	want := map[string]string{"outlook.countyFips": o.CountyFIPS}
	for _, h := range o.Hazards.All() {
		var sc risk.OutlookScenarios
		if h.Hazard.Scenarios != nil {
			sc = *h.Hazard.Scenarios
		}
		for _, s := range sc.All() {
			name := "outlook." + h.Key + "." + s.Key
			want[name+".hazardMultiplier"], want[name+".riskScore"] = floatCell(s.Scenario.HazardMultiplier), floatCell(s.Scenario.RiskScore)
		}
	}
	if len(want) != 41 {
		t.Fatalf("%d outlook columns expected", len(want))
	}
	for k, v := range want {
		i, ok := col[k]
		if !ok {
			t.Errorf("no column %s", k)
			continue
		}
		if recs[1][i] != v {
			t.Errorf("chicago %s = %q, want %q", k, recs[1][i], v)
		}
		if recs[2][i] != "" {
			t.Errorf("miami (no outlook) %s = %q, want empty", k, recs[2][i])
		}
	}
}

func floatCell(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

func intCell(v *int) string {
	if v == nil {
		return ""
	}
	return strconv.Itoa(*v)
}

// TestScoreCommandErrors: a file that cannot be scored is exit 2 before
// the data are even looked at, and leaves no output; so are bad flags.
func TestScoreCommandErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.csv", "externalId,latitude,longitude\nx,41.8781,-87.6298\n")
	out := filepath.Join(dir, "out.csv")
	noData := filepath.Join(dir, "no-such-data")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"empty file", []string{"--in", write("empty.csv", ""), "--out", out, "--data-dir", noData}, 2, "empty"},
		{"no header", []string{"--in", write("nohdr.csv", "x,41.8,-87.6\n"), "--out", out, "--data-dir", noData}, 2, "lacks the column(s) externalId, latitude, longitude"},
		{"missing longitude", []string{"--in", write("nolon.csv", "externalId,latitude,lng\n"), "--out", out, "--data-dir", noData}, 2, "longitude"},
		{"no --in", []string{"--out", out, "--data-dir", fixtureData}, 2, "--in is required"},
		{"no --out", []string{"--in", good, "--data-dir", fixtureData}, 2, "--out is required"},
		{"data folder is a file", []string{"--in", good, "--out", out, "--data-dir", good}, 1, "is not a directory"},
		{"no workers", []string{"--in", good, "--out", out, "--data-dir", fixtureData, "--workers", "0"}, 2, "--workers"},
		{"positional", []string{"--in", good, "--out", out, "--data-dir", fixtureData, "extra"}, 2, "unexpected argument"},
		{"missing input", []string{"--in", filepath.Join(dir, "nope.csv"), "--out", out, "--data-dir", fixtureData}, 1, "opening the input"},
		{"missing data", []string{"--in", good, "--out", out, "--data-dir", noData}, 1, "loading data"},
		{"output directory missing", []string{"--in", good, "--out", filepath.Join(dir, "no", "out.csv"), "--data-dir", fixtureData}, 1, "creating the output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cmd(t, map[string]string{}, append([]string{"score"}, tt.args...)...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, want %d; stderr %q, want it to mention %q", r.code, tt.code, r.stderr, tt.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("output written: %v", err)
			}
		})
	}
}

// TestScoreCommandSameFile: --out may name the input file, which is
// replaced by the scored file only when complete; scoring that again
// gives the same columns (ours dropped from the input, not doubled).
func TestScoreCommandSameFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "book.csv")
	if err := os.WriteFile(p, []byte("externalId,latitude,longitude,note\nx,41.8781,-87.6298,keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"LOCRISK_DATA_DIR": fixtureData, "LOCRISK_IN": p, "LOCRISK_OUT": p}
	if r := cmd(t, env, "score"); r.code != 0 {
		t.Fatalf("first run: exit %d %s", r.code, r.stderr)
	}
	first, _ := os.ReadFile(p)
	r := cmd(t, env, "score")
	if r.code != 0 || !strings.Contains(r.stderr, "left out") {
		t.Fatalf("second run: exit %d %s", r.code, r.stderr)
	}
	second, _ := os.ReadFile(p)
	if string(first) != string(second) || !strings.Contains(string(first), ",keep\r\n") {
		t.Errorf("scoring a scored file changed it:\n%s\n%s", first, second)
	}
}

// TestProgressBar: drawn only on a terminal, at most every progressEvery,
// with a percentage when the input's size is known, and cleared at the end.
func TestProgressBar(t *testing.T) {
	var b strings.Builder
	if isTerminal(&b) {
		t.Error("a strings.Builder is a terminal")
	}
	if f, err := os.CreateTemp(t.TempDir(), "x"); err == nil {
		if isTerminal(f) {
			t.Error("a regular file is a terminal")
		}
		f.Close()
	}
	off := newProgressBar(&b, 100)
	off.update(10, 50)
	off.finish()
	if b.Len() != 0 {
		t.Errorf("drawn off a terminal: %q", b.String())
	}
	tests := []struct {
		size int64
		want string
	}{
		{1000, "\r[###############...............]  50%  20 rows"},
		{0, "\r20 rows"},
	}
	for _, tt := range tests {
		b.Reset()
		p := &progressBar{w: &b, on: true, size: tt.size, start: time.Now().Add(-time.Second)}
		p.update(20, 500)
		p.update(30, 600) // within progressEvery: not drawn
		p.finish()
		if got := b.String(); !strings.HasPrefix(got, tt.want) || strings.Count(got, "\r") != 2 || !strings.HasSuffix(got, "\r\x1b[K") {
			t.Errorf("size %d: drew %q, want it to start %q and end cleared", tt.size, got, tt.want)
		}
	}
}

// TestScoreReferenceCache: --reference-cache writes the reference on the
// first run and reads it on the next, with the same output.
func TestScoreReferenceCache(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("externalId,latitude,longitude\na,41.8781,-87.6298\nb,25.7617,-80.1918\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "ref.cache")
	env := map[string]string{"LOCRISK_DATA_DIR": fixtureData, "LOCRISK_IN": in}
	var outs []string
	for i, args := range [][]string{
		{"--out", filepath.Join(dir, "none.csv")},
		{"--out", filepath.Join(dir, "cold.csv"), "--reference-cache", cache},
		{"--out", filepath.Join(dir, "warm.csv"), "--reference-cache", cache},
	} {
		if r := cmd(t, env, append([]string{"score"}, args...)...); r.code != 0 {
			t.Fatalf("run %d: exit %d %s", i, r.code, r.stderr)
		}
		if i == 1 {
			st, err := os.Stat(cache)
			if err != nil || st.Size() == 0 {
				t.Fatalf("no cache written: %v", err)
			}
		}
		b, _ := os.ReadFile(args[1])
		outs = append(outs, string(b))
	}
	if outs[0] != outs[1] || outs[1] != outs[2] || !strings.Contains(outs[0], ",completed,") {
		t.Errorf("outputs differ with the cache:\n%s\n%s\n%s", outs[0], outs[1], outs[2])
	}
}
