package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
)

var batchTests = []test{
	{"Create", createBatch},
	{"CreateInvalid", createBatchInvalid},
	{"CreateAllRejected", createBatchAllRejected},
	{"QuotaAllOrNothing", createBatchQuotaAllOrNothing},
	{"Idempotency", createBatchIdempotency},
	{"Lifecycle", batchLifecycle},
	{"CompletedByFailure", batchCompletedByFailure},
	{"List", listBatches},
	{"ItemScores", batchItemScores},
}

func fptr(v float64) *float64 { return &v }

func fstr(p *float64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

func validItem(ext string, lat, lon float64) locrisk.NewBatchItem {
	return locrisk.NewBatchItem{ExternalID: ext, Latitude: fptr(lat), Longitude: fptr(lon)}
}

func rejectedItem(ext, code string, lat, lon *float64) locrisk.NewBatchItem {
	return locrisk.NewBatchItem{ExternalID: ext, Latitude: lat, Longitude: lon, ErrorCode: code, ErrorMessage: code + " message"}
}

// ClaimJob claims queued jobs until it holds jobID, then releases the
// others, so a test can move one chosen job.
func ClaimJob(t testing.TB, s locrisk.Store, jobID string, now time.Time) locrisk.Job {
	t.Helper()
	ctx := context.Background()
	var others []string
	defer func() {
		for _, id := range others {
			if err := s.ReleaseJob(ctx, id, "tw", now); err != nil {
				t.Fatalf("release %s: %v", id, err)
			}
		}
	}()
	for {
		j, ok, err := s.ClaimJob(ctx, "tw", time.Hour, now)
		if err != nil || !ok {
			t.Fatalf("claim %s: ok=%v err=%v", jobID, ok, err)
		}
		if j.ID == jobID {
			return j
		}
		others = append(others, j.ID)
	}
}

// summaryBody is a report body with the summary a batch item shows
// (docs/api.md, Reports: summary.overallScore, riskLevel, moduleScores).
func summaryBody(t testing.TB, score int, level string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"summary": map[string]any{
		"overallScore": score, "riskLevel": level, "moduleScores": map[string]any{},
		"topRisks": []any{}, "confidence": map[string]any{"level": "high", "score": 0.9},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func completeBatchJob(t testing.TB, s locrisk.Store, jobID string, body []byte, now time.Time) locrisk.Job {
	t.Helper()
	ClaimJob(t, s, jobID, now)
	j, err := s.CompleteJob(context.Background(), jobID, "tw", locrisk.Report{DataVersion: "dv", Body: body}, now)
	if err != nil {
		t.Fatalf("complete %s: %v", jobID, err)
	}
	return j
}

func failBatchJob(t testing.TB, s locrisk.Store, jobID string, transient bool, now time.Time) {
	t.Helper()
	ClaimJob(t, s, jobID, now)
	if _, err := s.FailJob(context.Background(), jobID, "tw", "generation_failed", "boom", transient, now); err != nil {
		t.Fatalf("fail %s: %v", jobID, err)
	}
}

// BatchItems collects every item of a batch.
func BatchItems(t testing.TB, s locrisk.Store, acct, id string) []locrisk.BatchItem {
	t.Helper()
	var out []locrisk.BatchItem
	if err := s.BatchItems(context.Background(), acct, id, func(it locrisk.BatchItem) error {
		out = append(out, it)
		return nil
	}); err != nil {
		t.Fatalf("BatchItems: %v", err)
	}
	return out
}

// wantBatch checks the derived state of a batch.
func wantBatch(t testing.TB, s locrisk.Store, acct, id, status string, c locrisk.BatchCounts, progress int, completed *time.Time) locrisk.Batch {
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
	return b
}

func batchesEqual(a, b locrisk.Batch) bool {
	sameTime := (a.CompletedUTC == nil) == (b.CompletedUTC == nil) &&
		(a.CompletedUTC == nil || a.CompletedUTC.Equal(*b.CompletedUTC))
	a.CompletedUTC, b.CompletedUTC = nil, nil
	return sameTime && a.CreatedUTC.Equal(b.CreatedUTC) && a.ID == b.ID && a.Status == b.Status &&
		a.Counts == b.Counts && a.TotalItems == b.TotalItems && a.Name == b.Name && a.AccountID == b.AccountID
}

func createBatch(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a, other := newAccount(t, s, 10), newAccount(t, s, 10)
	now := t0.Add(1500 * time.Microsecond)
	nb := locrisk.NewBatch{AccountID: a.ID, Name: "Portfolio Q4", Items: []locrisk.NewBatchItem{
		validItem("A-1", 41.88, -87.63),
		rejectedItem("bad-lat", "invalid_latitude", fptr(95), fptr(-87)),
		validItem("", 37.77, -122.42),
		rejectedItem("no-coords", "invalid_latitude", nil, nil),
		rejectedItem("abroad", "unsupported_location", fptr(48.85), fptr(2.35)),
	}}
	b, replayed, err := s.CreateBatch(ctx, nb, now)
	if err != nil || replayed {
		t.Fatalf("CreateBatch = %v, %v", replayed, err)
	}
	created := t0.Add(time.Millisecond)
	want := locrisk.Batch{ID: b.ID, AccountID: a.ID, Name: "Portfolio Q4", TotalItems: 5, Status: locrisk.BatchProcessing,
		Counts: locrisk.BatchCounts{Queued: 2, Rejected: 3}, CreatedUTC: created}
	if fmt.Sprint(b) != fmt.Sprint(want) {
		t.Errorf("created %+v\nwant    %+v", b, want)
	}
	if got := wantBatch(t, s, a.ID, b.ID, locrisk.BatchProcessing, locrisk.BatchCounts{Queued: 2, Rejected: 3}, 60, nil); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("GetBatch %+v\nwant     %+v", got, want)
	}
	if _, err := s.GetBatch(ctx, other.ID, b.ID); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("GetBatch by another account: %v, want ErrNotFound", err)
	}
	if err := s.BatchItems(ctx, other.ID, b.ID, func(locrisk.BatchItem) error { t.Error("item of another account's batch"); return nil }); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("BatchItems by another account: %v, want ErrNotFound", err)
	}

	items := BatchItems(t, s, a.ID, b.ID)
	if len(items) != 5 {
		t.Fatalf("%d items, want 5", len(items))
	}
	for i, it := range items {
		if it.RowNumber != i+1 || it.ExternalID != nb.Items[i].ExternalID {
			t.Errorf("item %d: row %d externalId %q", i, it.RowNumber, it.ExternalID)
		}
		if got, want := fstr(it.Latitude)+","+fstr(it.Longitude), fstr(nb.Items[i].Latitude)+","+fstr(nb.Items[i].Longitude); got != want {
			t.Errorf("item %d: coordinates %s, want %s", i, got, want)
		}
		if nb.Items[i].ErrorCode != "" {
			if it.Status != locrisk.ItemRejected || it.JobID != nil || it.ErrorCode == nil || *it.ErrorCode != nb.Items[i].ErrorCode ||
				*it.ErrorMessage != nb.Items[i].ErrorMessage {
				t.Errorf("item %d: %+v, want rejected with %s", i, it, nb.Items[i].ErrorCode)
			}
			continue
		}
		if it.Status != locrisk.StatusQueued || it.JobID == nil || it.ErrorCode != nil || it.ReportID != nil || it.Score != nil {
			t.Fatalf("item %d: %+v, want a queued job", i, it)
		}
		j, err := s.GetJob(ctx, a.ID, *it.JobID)
		if err != nil {
			t.Fatal(err)
		}
		if j.Bucket != locrisk.BucketBulk || j.BatchID == nil || *j.BatchID != b.ID || j.Status != locrisk.StatusQueued ||
			j.Latitude != *nb.Items[i].Latitude || j.Longitude != *nb.Items[i].Longitude || !j.CreatedUTC.Equal(created) {
			t.Errorf("item %d job %+v", i, j)
		}
	}
	if got := *items[1].Latitude; got != 95 {
		t.Errorf("rejected item kept latitude %v, want 95 as sent", got)
	}
	if items[3].Latitude != nil || items[3].Longitude != nil {
		t.Errorf("item without numbers has coordinates %v %v", items[3].Latitude, items[3].Longitude)
	}
	if u, _ := s.PeriodUsage(ctx, a.ID, now); u.Created != 2 {
		t.Errorf("quota used %d, want 2 (valid items only)", u.Created)
	}
	if _, err := s.GetBatch(ctx, a.ID, "bat_doesnotexist000000000000"); !errors.Is(err, locrisk.ErrNotFound) {
		t.Errorf("unknown batch: %v", err)
	}
}

func createBatchInvalid(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 10)
	for name, nb := range map[string]locrisk.NewBatch{
		"no items":           {AccountID: a.ID},
		"valid without lat":  {AccountID: a.ID, Items: []locrisk.NewBatchItem{{Longitude: fptr(-80)}}},
		"valid without lon":  {AccountID: a.ID, Items: []locrisk.NewBatchItem{{Latitude: fptr(30)}}},
		"key without a hash": {AccountID: a.ID, Items: []locrisk.NewBatchItem{validItem("", 30, -80)}, IdempotencyKey: "k"},
	} {
		if _, _, err := s.CreateBatch(ctx, nb, t0); !errors.Is(err, locrisk.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	for name, nb := range map[string]locrisk.NewBatch{
		"unknown account, valid items": {AccountID: "acct_nope", Items: []locrisk.NewBatchItem{validItem("", 30, -80)}},
		"unknown account, all rejected": {AccountID: "acct_nope", Items: []locrisk.NewBatchItem{
			rejectedItem("", "invalid_latitude", nil, nil)}},
	} {
		if _, _, err := s.CreateBatch(ctx, nb, t0); !errors.Is(err, locrisk.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", name, err)
		}
	}
	if page, _, err := s.ListBatches(ctx, a.ID, 10, ""); err != nil || len(page) != 0 {
		t.Errorf("%d batches after refused creates (%v)", len(page), err)
	}
}

func createBatchAllRejected(t testing.TB, h Harness) {
	s := h.open(t)
	a := newAccount(t, s, 0) // no quota at all: rejected items use none
	b, _, err := s.CreateBatch(context.Background(), locrisk.NewBatch{AccountID: a.ID, Items: []locrisk.NewBatchItem{
		rejectedItem("x", "invalid_longitude", fptr(10), fptr(200)),
		rejectedItem("y", "unsupported_location", fptr(-33.9), fptr(151.2)),
	}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != locrisk.BatchCompleted || b.CompletedUTC == nil || !b.CompletedUTC.Equal(t0) || b.ProgressPercent() != 100 {
		t.Errorf("all-rejected batch %+v", b)
	}
	wantBatch(t, s, a.ID, b.ID, locrisk.BatchCompleted, locrisk.BatchCounts{Rejected: 2}, 100, &t0)
	if n := len(listJobs(t, s, a.ID, "")); n != 0 {
		t.Errorf("%d jobs for an all-rejected batch", n)
	}
}

func createBatchQuotaAllOrNothing(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 5)
	six := make([]locrisk.NewBatchItem, 6)
	for i := range six {
		six[i] = validItem(fmt.Sprint(i), 30+float64(i), -90)
	}
	_, _, err := s.CreateBatch(ctx, locrisk.NewBatch{AccountID: a.ID, Items: six, IdempotencyKey: "k6", RequestHash: "h6"}, t0)
	var qe *locrisk.QuotaError
	if !errors.As(err, &qe) || qe.Limit != 5 || qe.Used != 0 || !qe.ResetsAt.Equal(locrisk.NextMonthStart(t0)) {
		t.Fatalf("6 valid items on a quota of 5: %v, want *QuotaError{5, 0}", err)
	}
	if page, _, _ := s.ListBatches(ctx, a.ID, 10, ""); len(page) != 0 {
		t.Errorf("%d batches after a refused batch", len(page))
	}
	if n := len(listJobs(t, s, a.ID, "")); n != 0 {
		t.Errorf("%d jobs after a refused batch", n)
	}
	if u, _ := s.PeriodUsage(ctx, a.ID, t0); u.Created != 0 {
		t.Errorf("quota used %d after a refused batch", u.Created)
	}
	// Five valid items and three rejected ones fit exactly.
	fits := append(append([]locrisk.NewBatchItem{}, six[:5]...), rejectedItem("", "invalid_latitude", nil, nil),
		rejectedItem("", "invalid_longitude", fptr(1), nil), rejectedItem("", "unsupported_location", fptr(1), fptr(1)))
	// The refused request left no key behind: the same key with another
	// payload creates, rather than conflicting.
	b, replayed, err := s.CreateBatch(ctx, locrisk.NewBatch{AccountID: a.ID, Items: fits, IdempotencyKey: "k6", RequestHash: "h8"}, t0)
	if err != nil || replayed {
		t.Fatalf("5 valid + 3 rejected on a quota of 5: replayed %v, %v", replayed, err)
	}
	if b.Counts.Queued != 5 || b.Counts.Rejected != 3 {
		t.Errorf("counts %+v", b.Counts)
	}
	if _, _, err := s.CreateBatch(ctx, locrisk.NewBatch{AccountID: a.ID, Items: six[:1]}, t0); !errors.As(err, &qe) || qe.Used != 5 {
		t.Errorf("one more valid item: %v, want *QuotaError with 5 used", err)
	}
	if _, _, err := s.CreateJob(ctx, apiJob(a.ID), t0); !errors.As(err, &qe) {
		t.Errorf("a single job after the batch used the quota: %v", err)
	}
	// The quota period rolls over: the same batch fits again.
	if _, _, err := s.CreateBatch(ctx, locrisk.NewBatch{AccountID: a.ID, Items: six[:5]}, locrisk.NextMonthStart(t0)); err != nil {
		t.Errorf("next month: %v", err)
	}
}

func createBatchIdempotency(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a, other := newAccount(t, s, 100), newAccount(t, s, 100)
	nb := locrisk.NewBatch{AccountID: a.ID, Name: "n", Items: []locrisk.NewBatchItem{validItem("1", 30, -90), rejectedItem("2", "invalid_latitude", nil, nil)},
		IdempotencyKey: "key-1", RequestHash: "hash-1"}
	b1, replayed, err := s.CreateBatch(ctx, nb, t0)
	if err != nil || replayed {
		t.Fatalf("first: %v %v", replayed, err)
	}
	// The replay shows the batch as it stands now.
	items := BatchItems(t, s, a.ID, b1.ID)
	completeBatchJob(t, s, *items[0].JobID, summaryBody(t, 50, "moderate"), t0.Add(time.Second))

	b2, replayed, err := s.CreateBatch(ctx, nb, t0.Add(time.Hour))
	if err != nil || !replayed || b2.ID != b1.ID || b2.Status != locrisk.BatchCompleted || b2.Counts.Completed != 1 {
		t.Fatalf("replay = %+v %v %v, want the original batch, completed", b2, replayed, err)
	}
	conflict := nb
	conflict.RequestHash = "hash-2"
	if _, _, err := s.CreateBatch(ctx, conflict, t0.Add(time.Hour)); !errors.Is(err, locrisk.ErrIdempotencyConflict) {
		t.Errorf("other payload: %v, want ErrIdempotencyConflict", err)
	}
	// Keys are per account and per kind: the same key makes a new batch for
	// another account, and a single job with the same key is independent.
	ob := nb
	ob.AccountID = other.ID
	if b3, replayed, err := s.CreateBatch(ctx, ob, t0); err != nil || replayed || b3.ID == b1.ID {
		t.Errorf("same key, other account: %+v %v %v", b3, replayed, err)
	}
	if _, replayed, err := s.CreateJob(ctx, locrisk.NewJob{AccountID: a.ID, Latitude: 30, Longitude: -90, IdempotencyKey: "key-1", RequestHash: "hash-1"}, t0); err != nil || replayed {
		t.Errorf("same key for a single job: replayed=%v err=%v, want a new job", replayed, err)
	}
	// After 24 hours the key is forgotten.
	b4, replayed, err := s.CreateBatch(ctx, conflict, t0.Add(locrisk.IdempotencyTTL))
	if err != nil || replayed || b4.ID == b1.ID {
		t.Errorf("expired key: %+v %v %v, want a new batch", b4, replayed, err)
	}
	if page, _, _ := s.ListBatches(ctx, a.ID, 10, ""); len(page) != 2 {
		t.Errorf("%d batches, want 2", len(page))
	}
}

// batchLifecycle walks a batch through every state change a job can
// make, including a failed job retried by hand, and checks after each one
// that status, counts, progress and completion time follow.
func batchLifecycle(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 100)
	b, _, err := s.CreateBatch(ctx, locrisk.NewBatch{AccountID: a.ID, Items: []locrisk.NewBatchItem{
		validItem("a", 30, -90), validItem("b", 31, -91), validItem("c", 32, -92),
		rejectedItem("d", "invalid_latitude", nil, nil),
	}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	items := BatchItems(t, s, a.ID, b.ID)
	ja, jb, jc := *items[0].JobID, *items[1].JobID, *items[2].JobID
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

	wantBatch(t, s, a.ID, b.ID, locrisk.BatchProcessing, locrisk.BatchCounts{Queued: 3, Rejected: 1}, 25, nil)

	ClaimJob(t, s, ja, at(1))
	wantBatch(t, s, a.ID, b.ID, locrisk.BatchProcessing, locrisk.BatchCounts{Queued: 2, Processing: 1, Rejected: 1}, 25, nil)

	if _, err := s.CompleteJob(ctx, ja, "tw", locrisk.Report{DataVersion: "dv", Body: summaryBody(t, 10, "very_low")}, at(2)); err != nil {
		t.Fatal(err)
	}
	wantBatch(t, s, a.ID, b.ID, locrisk.BatchProcessing, locrisk.BatchCounts{Queued: 2, Completed: 1, Rejected: 1}, 50, nil)

	// A transient failure being retried automatically keeps the item queued.
	ClaimJob(t, s, jb, at(3))
	if err := s.RetryLater(ctx, jb, "tw", at(4), "generation_failed", "try again", at(3)); err != nil {
		t.Fatal(err)
	}
	wantBatch(t, s, a.ID, b.ID, locrisk.BatchProcessing, locrisk.BatchCounts{Queued: 2, Completed: 1, Rejected: 1}, 50, nil)
	if it := BatchItems(t, s, a.ID, b.ID)[1]; it.Status != locrisk.StatusQueued || it.ErrorCode != nil {
		t.Errorf("item being retried automatically: %+v, want queued without error", it)
	}

	failBatchJob(t, s, jb, true, at(5))
	wantBatch(t, s, a.ID, b.ID, locrisk.BatchProcessing, locrisk.BatchCounts{Queued: 1, Completed: 1, Failed: 1, Rejected: 1}, 75, nil)

	completeBatchJob(t, s, jc, summaryBody(t, 20, "low"), at(6))
	done := at(6)
	wantBatch(t, s, a.ID, b.ID, locrisk.BatchCompleted, locrisk.BatchCounts{Completed: 2, Failed: 1, Rejected: 1}, 100, &done)
	if it := BatchItems(t, s, a.ID, b.ID)[1]; it.Status != locrisk.StatusFailed || it.ErrorCode == nil || *it.ErrorCode != "generation_failed" || *it.ErrorMessage != "boom" {
		t.Errorf("failed item %+v", it)
	}

	// Retried by hand: processing again until the job ends again.
	if _, err := s.RetryJob(ctx, a.ID, jb, at(7)); err != nil {
		t.Fatal(err)
	}
	wantBatch(t, s, a.ID, b.ID, locrisk.BatchProcessing, locrisk.BatchCounts{Queued: 1, Completed: 2, Rejected: 1}, 75, nil)
	completeBatchJob(t, s, jb, summaryBody(t, 30, "low"), at(9))
	done = at(9)
	wantBatch(t, s, a.ID, b.ID, locrisk.BatchCompleted, locrisk.BatchCounts{Completed: 3, Rejected: 1}, 100, &done)
}

// A job that fails for good as the last one completes the batch too.
func batchCompletedByFailure(t testing.TB, h Harness) {
	s := h.open(t)
	a := newAccount(t, s, 100)
	b, _, err := s.CreateBatch(context.Background(), locrisk.NewBatch{AccountID: a.ID, Items: []locrisk.NewBatchItem{validItem("", 30, -90)}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	failBatchJob(t, s, *BatchItems(t, s, a.ID, b.ID)[0].JobID, false, t0.Add(time.Minute))
	done := t0.Add(time.Minute)
	wantBatch(t, s, a.ID, b.ID, locrisk.BatchCompleted, locrisk.BatchCounts{Failed: 1}, 100, &done)
	if _, err := s.RetryJob(context.Background(), a.ID, *BatchItems(t, s, a.ID, b.ID)[0].JobID, t0); !errors.Is(err, locrisk.ErrNotRetryable) {
		t.Errorf("retrying a permanent failure: %v", err)
	}
	wantBatch(t, s, a.ID, b.ID, locrisk.BatchCompleted, locrisk.BatchCounts{Failed: 1}, 100, &done)
}

// ListBatches pages an account's batches newest first, each with the
// counts GetBatch derives, and never shows another account's.
func listBatches(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a, other := newAccount(t, s, 1000), newAccount(t, s, 1000)
	var want []string // newest first
	for i := range 7 {
		// Batches 2..4 share a creation time, so the id decides their order.
		at := t0.Add(time.Duration(i) * time.Second)
		if i >= 2 && i <= 4 {
			at = t0.Add(2 * time.Second)
		}
		items := []locrisk.NewBatchItem{validItem("x", 30, -90), rejectedItem("y", "invalid_latitude", nil, nil)}
		if i == 5 {
			items = items[1:] // all rejected: completed at once
		}
		b, _, err := s.CreateBatch(ctx, locrisk.NewBatch{AccountID: a.ID, Items: items}, at)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, b.ID)
		if _, _, err := s.CreateBatch(ctx, locrisk.NewBatch{AccountID: other.ID, Items: items}, at); err != nil {
			t.Fatal(err)
		}
	}
	slices.Reverse(want)
	// Within one creation time, id DESC.
	slices.SortStableFunc(want[2:5], func(x, y string) int { return -strings.Compare(x, y) })

	for _, limit := range []int{1, 3, 7, 20} {
		var got []string
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatalf("limit %d: too many pages", limit)
			}
			page, next, err := s.ListBatches(ctx, a.ID, limit, cursor)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > limit {
				t.Fatalf("limit %d: page of %d", limit, len(page))
			}
			for _, b := range page {
				one, err := s.GetBatch(ctx, a.ID, b.ID)
				if err != nil {
					t.Fatal(err)
				}
				if !batchesEqual(b, one) {
					t.Errorf("listed %+v, GET shows %+v", b, one)
				}
				got = append(got, b.ID)
			}
			if next == "" {
				break
			}
			cursor = next
		}
		if !slices.Equal(got, want) {
			t.Errorf("limit %d: order %v, want %v", limit, got, want)
		}
	}
	// The all-rejected batch is listed completed.
	page, _, err := s.ListBatches(ctx, a.ID, 20, "")
	if err != nil {
		t.Fatal(err)
	}
	if b := page[1]; b.Status != locrisk.BatchCompleted || b.Counts.Rejected != 1 || b.CompletedUTC == nil {
		t.Errorf("all-rejected batch listed as %+v", b)
	}
	// A job list's cursor is not a batch list's.
	for range 2 {
		if _, _, err := s.CreateJob(ctx, apiJob(a.ID), t0); err != nil {
			t.Fatal(err)
		}
	}
	_, jobCursor, err := s.ListJobs(ctx, a.ID, "", 1, "")
	if err != nil || jobCursor == "" {
		t.Fatalf("job cursor %q, %v", jobCursor, err)
	}
	if _, _, err := s.ListBatches(ctx, a.ID, 20, jobCursor); !errors.Is(err, locrisk.ErrBadCursor) {
		t.Errorf("job cursor: %v, want ErrBadCursor", err)
	}
	// An account without batches: an empty page.
	if page, next, err := s.ListBatches(ctx, newAccount(t, s, 1).ID, 20, ""); err != nil || len(page) != 0 || next != "" {
		t.Errorf("empty account: %v %q %v", page, next, err)
	}
}

// batchItemScores: a completed item shows the scores handed over with its
// report (Report.Scores), a module without data as a nil score; an item
// whose report came without scores shows none; the report's body comes
// back byte for byte.
func batchItemScores(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 10)
	b, _, err := s.CreateBatch(ctx, locrisk.NewBatch{AccountID: a.ID, Items: []locrisk.NewBatchItem{validItem("a", 30, -90), validItem("b", 31, -91)}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	items := BatchItems(t, s, a.ID, b.ID)
	seven := 7
	body := summaryBody(t, 42, "moderate")
	ClaimJob(t, s, *items[0].JobID, t0)
	done, err := s.CompleteJob(ctx, *items[0].JobID, "tw", locrisk.Report{DataVersion: "dv", Body: body,
		Scores: &locrisk.ReportScores{Overall: 42, RiskLevel: "moderate", Modules: []locrisk.ModuleScore{{Module: "hydrology", Score: &seven}, {Module: "wildfire"}}}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	completeBatchJob(t, s, *items[1].JobID, []byte(`{"no":"summary"}`), t0)
	items = BatchItems(t, s, a.ID, b.ID)
	it := items[0]
	if it.Score == nil || *it.Score != 42 || it.RiskLevel == nil || *it.RiskLevel != "moderate" || len(it.ModuleScores) != 2 ||
		it.ModuleScores["hydrology"] == nil || *it.ModuleScores["hydrology"] != 7 || it.ModuleScores["wildfire"] != nil {
		t.Errorf("item with scores: %+v (modules %v)", it, it.ModuleScores)
	}
	if wf, ok := it.ModuleScores["wildfire"]; !ok || wf != nil {
		t.Errorf("a module without data: %v %v, want present and nil", wf, ok)
	}
	if it := items[1]; it.Status != locrisk.StatusCompleted || it.Score != nil || it.RiskLevel != nil || it.ModuleScores != nil {
		t.Errorf("item whose report has no scores: %+v", it)
	}
	r, err := s.GetReport(ctx, a.ID, *done.ReportID)
	if err != nil || string(r.Body) != string(body) {
		t.Errorf("report body %.80s (%v), want the bytes written", r.Body, err)
	}
}
