package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/storetest"
)

func fptr(v float64) *float64 { return &v }

func validItem(ext string, lat, lon float64) locrisk.NewBatchItem {
	return locrisk.NewBatchItem{ExternalID: ext, Latitude: fptr(lat), Longitude: fptr(lon)}
}

func rejectedItem(ext, code string, lat, lon *float64) locrisk.NewBatchItem {
	return locrisk.NewBatchItem{ExternalID: ext, Latitude: lat, Longitude: lon, ErrorCode: code, ErrorMessage: code + " message"}
}

// contractModules are the six summary.moduleScores keys docs/api.md (Reports)
// fixes, in report order. The store reads whatever keys a stored report
// has; the tests write exactly these.
var contractModules = [6]string{"hydrology", "severeWeather", "wildfire", "earthquake", "landslide", "environmentalExposure"}

// summaryBody is a stored report body with only the summary fields the
// batch queries read.
func summaryBody(t *testing.T, score int, level string, modules [6]*int) []byte {
	t.Helper()
	ms := map[string]*int{}
	for i, m := range contractModules {
		ms[m] = modules[i]
	}
	b, err := json.Marshal(map[string]any{"summary": map[string]any{
		"overallScore": score, "riskLevel": level, "moduleScores": ms,
		"topRisks": []any{}, "confidence": map[string]any{"level": "high", "score": 0.9},
	}, "report": map[string]any{"modules": map[string]any{"hydrology": map[string]any{"score": 99}}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testScores are the scores of a summaryBody body, as the scheduler hands
// them over with a report (Report.Scores), in contractModules order; nil
// for a body without a summary.
func testScores(body []byte) *locrisk.ReportScores {
	var r struct {
		Summary *struct {
			OverallScore int             `json:"overallScore"`
			RiskLevel    string          `json:"riskLevel"`
			ModuleScores map[string]*int `json:"moduleScores"`
		} `json:"summary"`
	}
	if json.Unmarshal(body, &r) != nil || r.Summary == nil {
		return nil
	}
	sc := &locrisk.ReportScores{Overall: r.Summary.OverallScore, RiskLevel: r.Summary.RiskLevel}
	for _, m := range contractModules {
		sc.Modules = append(sc.Modules, locrisk.ModuleScore{Module: m, Score: r.Summary.ModuleScores[m]})
	}
	return sc
}

func completeBatchJob(t *testing.T, s *Store, jobID string, body []byte, now time.Time) locrisk.Job {
	t.Helper()
	storetest.ClaimJob(t, s, jobID, now)
	j, err := s.CompleteJob(context.Background(), jobID, "tw", locrisk.Report{DataVersion: "dv", Body: body, Scores: testScores(body)}, now)
	if err != nil {
		t.Fatalf("complete %s: %v", jobID, err)
	}
	return j
}

func failBatchJob(t *testing.T, s *Store, jobID string, transient bool, now time.Time) {
	t.Helper()
	storetest.ClaimJob(t, s, jobID, now)
	if _, err := s.FailJob(context.Background(), jobID, "tw", "generation_failed", "boom", transient, now); err != nil {
		t.Fatalf("fail %s: %v", jobID, err)
	}
}

// wantBatch checks the derived state of a batch, and that the stored
// status columns (kept for the operations summary) agree with it.
func wantBatch(t *testing.T, s *Store, acct, id, status string, c locrisk.BatchCounts, progress int, completed *time.Time) locrisk.Batch {
	t.Helper()
	b, err := s.GetBatch(context.Background(), acct, id)
	if err != nil {
		t.Fatalf("GetBatch: %v", err)
	}
	if b.Status != status || b.Counts != c || b.ProgressPercent() != progress {
		t.Errorf("batch status %s counts %+v progress %d; want %s %+v %d", b.Status, b.Counts, b.ProgressPercent(), status, c, progress)
	}
	switch {
	case completed == nil && b.CompletedUTC != nil:
		t.Errorf("completedUtc = %v, want none", b.CompletedUTC)
	case completed != nil && (b.CompletedUTC == nil || !b.CompletedUTC.Equal(*completed)):
		t.Errorf("completedUtc = %v, want %v", b.CompletedUTC, *completed)
	}
	var stored struct {
		Status    string  `db:"status"`
		Completed *string `db:"completed_utc"`
	}
	if err := s.db.Get(&stored, `SELECT status, completed_utc FROM batches WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
	wantStored := "<nil>"
	if b.CompletedUTC != nil {
		wantStored = FormatTime(*b.CompletedUTC)
	}
	gotStored := "<nil>"
	if stored.Completed != nil {
		gotStored = *stored.Completed
	}
	if stored.Status != b.Status || gotStored != wantStored {
		t.Errorf("stored batch status %s/%s disagrees with derived %s/%s", stored.Status, gotStored, b.Status, wantStored)
	}
	return b
}

func TestConcurrentBatchSameKey(t *testing.T) {
	s := newStore(t, Options{})
	a := newAccount(t, s, 1000)
	items := make([]locrisk.NewBatchItem, 20)
	for i := range items {
		items[i] = validItem(fmt.Sprint(i), 30, -90)
	}
	const n = 8
	ids := make([]string, n)
	replays := 0
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			b, replayed, err := s.CreateBatch(context.Background(), locrisk.NewBatch{AccountID: a.ID, Items: items, IdempotencyKey: "same", RequestHash: "h"}, t0)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			ids[i] = b.ID
			if replayed {
				replays++
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("concurrent requests with one key made different batches: %v", ids)
		}
	}
	if replays != n-1 {
		t.Errorf("%d replays, want %d", replays, n-1)
	}
	if b, j := countRows(t, s, `SELECT COUNT(*) FROM batches`), countRows(t, s, `SELECT COUNT(*) FROM report_jobs`); b != 1 || j != 20 {
		t.Errorf("%d batches and %d jobs, want 1 and 20", b, j)
	}
}

// TestBatchLifecycle walks a batch through every state change a job can
// make, including a failed job retried by hand, and checks after each one
// that status, counts, progress and completion time follow, and that the
// stored status columns agree with the derived ones.
func TestBatchLifecycle(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 100)
	b, _, err := s.CreateBatch(ctx, locrisk.NewBatch{AccountID: a.ID, Items: []locrisk.NewBatchItem{
		validItem("a", 30, -90), validItem("b", 31, -91), validItem("c", 32, -92),
		rejectedItem("d", "invalid_latitude", nil, nil),
	}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	items := storetest.BatchItems(t, s, a.ID, b.ID)
	ja, jb, jc := *items[0].JobID, *items[1].JobID, *items[2].JobID
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

	wantBatch(t, s, a.ID, b.ID, locrisk.BatchProcessing, locrisk.BatchCounts{Queued: 3, Rejected: 1}, 25, nil)

	storetest.ClaimJob(t, s, ja, at(1))
	wantBatch(t, s, a.ID, b.ID, locrisk.BatchProcessing, locrisk.BatchCounts{Queued: 2, Processing: 1, Rejected: 1}, 25, nil)

	if _, err := s.CompleteJob(ctx, ja, "tw", locrisk.Report{DataVersion: "dv", Body: summaryBody(t, 10, "very_low", [6]*int{})}, at(2)); err != nil {
		t.Fatal(err)
	}
	wantBatch(t, s, a.ID, b.ID, locrisk.BatchProcessing, locrisk.BatchCounts{Queued: 2, Completed: 1, Rejected: 1}, 50, nil)

	// A transient failure being retried automatically keeps the item queued.
	storetest.ClaimJob(t, s, jb, at(3))
	if err := s.RetryLater(ctx, jb, "tw", at(4), "generation_failed", "try again", at(3)); err != nil {
		t.Fatal(err)
	}
	wantBatch(t, s, a.ID, b.ID, locrisk.BatchProcessing, locrisk.BatchCounts{Queued: 2, Completed: 1, Rejected: 1}, 50, nil)
	if it := storetest.BatchItems(t, s, a.ID, b.ID)[1]; it.Status != locrisk.StatusQueued || it.ErrorCode != nil {
		t.Errorf("item being retried automatically: %+v, want queued without error", it)
	}

	failBatchJob(t, s, jb, true, at(5))
	wantBatch(t, s, a.ID, b.ID, locrisk.BatchProcessing, locrisk.BatchCounts{Queued: 1, Completed: 1, Failed: 1, Rejected: 1}, 75, nil)

	completeBatchJob(t, s, jc, summaryBody(t, 20, "low", [6]*int{}), at(6))
	done := at(6)
	wantBatch(t, s, a.ID, b.ID, locrisk.BatchCompleted, locrisk.BatchCounts{Completed: 2, Failed: 1, Rejected: 1}, 100, &done)
	if it := storetest.BatchItems(t, s, a.ID, b.ID)[1]; it.Status != locrisk.StatusFailed || it.ErrorCode == nil || *it.ErrorCode != "generation_failed" || *it.ErrorMessage != "boom" {
		t.Errorf("failed item %+v", it)
	}

	// Retried by hand: processing again until the job ends again.
	if _, err := s.RetryJob(ctx, a.ID, jb, at(7)); err != nil {
		t.Fatal(err)
	}
	wantBatch(t, s, a.ID, b.ID, locrisk.BatchProcessing, locrisk.BatchCounts{Queued: 1, Completed: 2, Rejected: 1}, 75, nil)
	completeBatchJob(t, s, jb, summaryBody(t, 30, "low", [6]*int{}), at(9))
	done = at(9)
	wantBatch(t, s, a.ID, b.ID, locrisk.BatchCompleted, locrisk.BatchCounts{Completed: 3, Rejected: 1}, 100, &done)
}

func TestBatchItemScores(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	a := newAccount(t, s, 100)
	b, _, err := s.CreateBatch(ctx, locrisk.NewBatch{AccountID: a.ID, Items: []locrisk.NewBatchItem{
		validItem("x", 30, -90), validItem("y", 31, -91),
	}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	items := storetest.BatchItems(t, s, a.ID, b.ID)
	v := func(n int) *int { return &n }
	modules := [6]*int{v(1), v(0), nil, v(100), v(55), nil}
	done := completeBatchJob(t, s, *items[0].JobID, summaryBody(t, 77, "high", modules), t0)

	items = storetest.BatchItems(t, s, a.ID, b.ID)
	it := items[0]
	if it.Status != locrisk.StatusCompleted || it.ReportID == nil || *it.ReportID != *done.ReportID ||
		it.Score == nil || *it.Score != 77 || it.RiskLevel == nil || *it.RiskLevel != "high" || it.ErrorCode != nil {
		t.Fatalf("completed item %+v", it)
	}
	// Every module key comes back, a null score as a present key with a
	// nil value (never a 0).
	if len(it.ModuleScores) != len(contractModules) {
		t.Errorf("module scores %v, want exactly the keys %v", it.ModuleScores, contractModules)
	}
	var got [6]*int
	for i, m := range contractModules {
		p, ok := it.ModuleScores[m]
		if !ok {
			t.Errorf("module scores lack %s: %v", m, it.ModuleScores)
		}
		got[i] = p
	}
	if got, want := fmt.Sprint(derefAll(got)), fmt.Sprint(derefAll(modules)); got != want {
		t.Errorf("module scores %s, want %s", got, want)
	}
	if it := items[1]; it.Status != locrisk.StatusQueued || it.Score != nil || it.RiskLevel != nil || it.ReportID != nil || it.ModuleScores != nil {
		t.Errorf("queued item %+v", it)
	}
	// An error from the callback stops the iteration and comes back as is.
	stop := errors.New("stop")
	calls := 0
	if err := s.BatchItems(ctx, a.ID, b.ID, func(locrisk.BatchItem) error { calls++; return stop }); err != stop || calls != 1 {
		t.Errorf("callback error: %v after %d calls", err, calls)
	}
}

func derefAll(ps [6]*int) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = "null"
		if p != nil {
			out[i] = fmt.Sprint(*p)
		}
	}
	return out
}

// The batch queries use indexes, not scans of every job or item.
func TestBatchQueryPlans(t *testing.T) {
	s := newStore(t, Options{})
	for name, q := range map[string]string{
		"items":  itemsQuery,
		"status": `SELECT COUNT(*) FROM report_jobs WHERE batch_id = 'x' AND status IN ('queued', 'processing')`,
	} {
		var plan []struct {
			ID     int    `db:"id"`
			Parent int    `db:"parent"`
			NotUse int    `db:"notused"`
			Detail string `db:"detail"`
		}
		args := []any{}
		if name == "items" {
			args = []any{"bat_x", "acct_x"}
		}
		if err := s.db.Select(&plan, "EXPLAIN QUERY PLAN "+q, args...); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, p := range plan {
			if len(p.Detail) >= 4 && p.Detail[:4] == "SCAN" {
				t.Errorf("%s query scans: %q", name, p.Detail)
			}
		}
	}
}
