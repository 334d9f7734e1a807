package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/reportcodec"
	"github.com/locrisk/locrisk/internal/storetest"
)

// TestReportsStoredCompactly: a report is stored compressed with its
// scores in columns the sqlite3 shell reads; a database from before
// migration 13 (plain JSON bodies, no score columns) migrates with its
// reports' scores copied out of their bodies, and both kinds of report
// read back byte for byte, side by side.
func TestReportsStoredCompactly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "reports.db")
	s := openStore(t, path, Options{})
	a := newAccount(t, s, 10)
	b, _, err := s.CreateBatch(ctx, locrisk.NewBatch{AccountID: a.ID, Items: []locrisk.NewBatchItem{validItem("old", 30, -90), validItem("new", 31, -91)}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	items := storetest.BatchItems(t, s, a.ID, b.ID)
	seven := 7
	oldBody := summaryBody(t, 61, "high", [6]*int{&seven})
	oldJob := completeBatchJob(t, s, *items[0].JobID, oldBody, t0)

	// The file as the previous release left it: the body as plain JSON
	// text, no codec or score columns, version 11.
	if _, err := s.db.ExecContext(ctx, `UPDATE reports SET body = ? WHERE id = ?`, string(oldBody), *oldJob.ReportID); err != nil {
		t.Fatal(err)
	}
	undoMigration13(t, s)
	if _, err := s.db.ExecContext(ctx, `PRAGMA user_version = 12`); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = openStore(t, path, Options{})
	newBody := summaryBody(t, 12, "very_low", [6]*int{nil, &seven})
	newJob := completeBatchJob(t, s, *items[1].JobID, newBody, t0)

	for _, tc := range []struct {
		name   string
		job    locrisk.Job
		body   []byte
		codec  string
		score  int
		module string // json_extract(module_scores, '$.hydrology')
	}{
		{"migrated", oldJob, oldBody, "", 61, "7"},
		{"new", newJob, newBody, reportcodec.Current, 12, ""},
	} {
		r, err := s.GetReport(ctx, a.ID, *tc.job.ReportID)
		if err != nil || string(r.Body) != string(tc.body) {
			t.Errorf("%s: body %.60s (%v), want the bytes written", tc.name, r.Body, err)
		}
		var row struct {
			Codec  *string `db:"codec"`
			Size   int     `db:"size"`
			Score  *int    `db:"overall_score"`
			Level  *string `db:"risk_level"`
			Hydro  *string `db:"hydro"`
			Module *string `db:"module_scores"`
		}
		if err := s.db.GetContext(ctx, &row, `SELECT body_codec AS codec, length(body) AS size, overall_score, risk_level,
			CAST(json_extract(module_scores, '$.hydrology') AS TEXT) AS hydro, module_scores FROM reports WHERE id = ?`, r.ID); err != nil {
			t.Fatal(err)
		}
		codec := ""
		if row.Codec != nil {
			codec = *row.Codec
		}
		hydro := ""
		if row.Hydro != nil {
			hydro = *row.Hydro
		}
		if codec != tc.codec || row.Score == nil || *row.Score != tc.score || row.Level == nil || hydro != tc.module {
			t.Errorf("%s: row codec %q score %v level %v hydrology %q (module_scores %v)", tc.name, codec, row.Score, row.Level, hydro, row.Module)
		}
		if tc.codec != "" && row.Size >= len(tc.body) {
			t.Errorf("%s: stored %d bytes for a %d-byte body", tc.name, row.Size, len(tc.body))
		}
	}
	items = storetest.BatchItems(t, s, a.ID, b.ID)
	if it := items[0]; it.Score == nil || *it.Score != 61 || *it.ModuleScores["hydrology"] != 7 {
		t.Errorf("migrated item %+v", it)
	}
	if it := items[1]; it.Score == nil || *it.Score != 12 || it.ModuleScores["hydrology"] != nil || *it.ModuleScores["severeWeather"] != 7 {
		t.Errorf("new item %+v", it)
	}
}
