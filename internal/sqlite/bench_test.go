package sqlite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
)

// BenchmarkCreateJob measures the durable create (idempotency lookup,
// quota count, insert job, remember key) with parallel callers.
func BenchmarkCreateJob(b *testing.B) {
	for _, par := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("callers=%d", par), func(b *testing.B) {
			s := newStore(b, Options{})
			a := newAccount(b, s, 1<<30)
			var n atomic.Int64
			b.SetParallelism(par)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					j := apiJob(a.ID)
					j.IdempotencyKey = fmt.Sprintf("k%d", n.Add(1))
					j.RequestHash = "h"
					if _, _, err := s.CreateJob(context.Background(), j, t0); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkClaimComplete measures one job's scheduler-side life: claim,
// store a report, complete.
func BenchmarkClaimComplete(b *testing.B) {
	s := newStore(b, Options{})
	ctx := context.Background()
	a := newAccount(b, s, 1<<30)
	body := make([]byte, 8<<10)
	for i := range body {
		body[i] = 'x'
	}
	for b.Loop() {
		b.StopTimer()
		if _, _, err := s.CreateJob(ctx, apiJob(a.ID), t0); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		j, ok, err := s.ClaimJob(ctx, "w", time.Minute, t0)
		if err != nil || !ok {
			b.Fatal(ok, err)
		}
		if _, err := s.CompleteJob(ctx, j.ID, "w", locrisk.Report{Body: body}, t0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateJobLatency reports the latency distribution of creates
// from 32 concurrent callers, the shape of a burst of API requests. The
// in-process write queue keeps the tail close to 32 commits' time; without
// it SQLite's sleeping busy handler let single calls wait over a second.
func BenchmarkCreateJobLatency(b *testing.B) {
	s := newStore(b, Options{})
	a := newAccount(b, s, 1<<30)
	const callers = 32
	var mu sync.Mutex
	var lat []time.Duration
	var next atomic.Int64
	b.ResetTimer()
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				j := apiJob(a.ID)
				j.IdempotencyKey = fmt.Sprintf("k%d", i)
				j.RequestHash = "h"
				start := time.Now()
				if _, _, err := s.CreateJob(context.Background(), j, t0); err != nil {
					b.Error(err)
					return
				}
				d := time.Since(start)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
	}
}

// BenchmarkWebhookEndpoints measures the endpoint operations an account's
// disabled endpoints could slow: listing the first page, a create and
// disable cycle (which counts the active endpoints), writing a job's event
// for the account's subscribers, and an idle delivery claim and next-due
// look-up, with no disabled endpoints and with 20,000 (what 20,000
// create and disable cycles leave, which an account can reach, since
// disabled endpoints do not count against its limit). Disabled rows are
// written directly, in one transaction, to keep the setup short.
//
//	go test ./internal/sqlite -run '^$' -bench WebhookEndpoints -benchtime 200x
func BenchmarkWebhookEndpoints(b *testing.B) {
	for _, disabled := range []int{0, 20000} {
		s := newStore(b, Options{})
		ctx := context.Background()
		a := newAccount(b, s, 1<<30)
		if _, err := s.db.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
			INSERT INTO webhook_endpoints (id, account_id, name, url, events, signing_secret, is_active, created_utc, disabled_utc)
			SELECT printf('we_disabled%020d', i), ?, 'old', 'https://hooks.example.com/', 'report.job.completed', 'whsec_x', 0,
				strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' seconds'), '2026-06-01T00:00:00.000Z'
			FROM n`, disabled, a.ID); err != nil && disabled > 0 {
			b.Fatal(err)
		}
		for range locrisk.MaxActiveEndpoints - 1 {
			newEndpoint(b, s, a.ID, t0)
		}
		b.Run(fmt.Sprintf("disabled=%d/list", disabled), func(b *testing.B) {
			for b.Loop() {
				eps, _, err := s.ListWebhookEndpoints(ctx, a.ID, 20, "")
				if err != nil || len(eps) != 20 {
					b.Fatal(len(eps), err)
				}
			}
		})
		b.Run(fmt.Sprintf("disabled=%d/create-disable", disabled), func(b *testing.B) {
			for b.Loop() {
				e := newEndpoint(b, s, a.ID, t0)
				if err := s.DisableWebhookEndpoint(ctx, a.ID, e.ID, t0); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("disabled=%d/job-event", disabled), func(b *testing.B) {
			// A job and its event, written for the account's subscribers
			// as a job's final transaction does.
			for b.Loop() {
				newEvent(b, s, a.ID, evCompleted, t0)
			}
			b.StopTimer()
			if _, err := s.db.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'succeeded', next_attempt_utc = NULL`); err != nil {
				b.Fatal(err)
			}
		})
		b.Run(fmt.Sprintf("disabled=%d/claim-idle", disabled), func(b *testing.B) {
			for b.Loop() {
				if _, ok, err := s.ClaimWebhookDelivery(ctx, time.Minute, testLimits(), t0); err != nil || ok {
					b.Fatal(ok, err)
				}
				if _, _, err := s.NextWebhookDue(ctx, testLimits(), t0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkJobWritesCounters is what the triggers of migrations 010 (the
// counters) and 012 (the completion-time histograms) add to the
// statements that write jobs, side by side in one run: one job's insert
// (insertJob's statement), claim and completion, a hundred jobs per
// transaction so that the disk does not dominate. "without" drops the
// triggers of both, "no-histograms" those of 012 only. SQLite compiles a table's triggers into every
// statement that writes it when the statement is prepared: "unprepared"
// prepares each statement anew, as database/sql does for ExecContext with
// a query text (today's store); "prepared" prepares the three once per
// transaction and runs them for every job, as a write path that gathers
// many jobs into one transaction can.
//
//	go test -run '^$' -bench JobWritesCounters ./internal/sqlite
func BenchmarkJobWritesCounters(b *testing.B) {
	const (
		insert = `INSERT INTO report_jobs
		(id, account_id, batch_id, bucket, latitude, longitude, status, attempts, run_after_utc, created_utc, updated_utc)
		VALUES (?, ?, NULL, 'api', 1, 2, 'queued', 0, ?, ?, ?)`
		claim = `UPDATE report_jobs SET status = 'processing', lease_owner = 'w',
		lease_expires_utc = ?, attempts = attempts + 1, updated_utc = ? WHERE id = ?`
		complete = `UPDATE report_jobs SET status = 'completed', report_id = ?,
		completed_utc = ?, updated_utc = ?, lease_owner = NULL, lease_expires_utc = NULL
		WHERE id = ? AND status = 'processing' AND lease_owner = 'w'`
	)
	for _, prepared := range []bool{false, true} {
		histograms := []string{"report_jobs_completion_insert", "report_jobs_completion_enter",
			"report_jobs_completion_leave", "report_jobs_completion_delete"}
		counters := []string{"report_jobs_usage_insert", "report_jobs_usage_update", "report_jobs_usage_delete",
			"report_jobs_batch_update", "batch_items_insert", "batch_items_delete"}
		for _, v := range []struct {
			name string
			drop []string
		}{{"with", nil}, {"no-histograms", histograms}, {"without", append(slices.Clone(counters), histograms...)}} {
			name := map[bool]string{false: "unprepared", true: "prepared"}[prepared] + "/" + v.name
			b.Run(name, func(b *testing.B) {
				s := newStore(b, Options{})
				a := newAccount(b, s, 1<<30)
				ctx := context.Background()
				for _, tr := range v.drop {
					if _, err := s.db.Exec(`DROP TRIGGER ` + tr); err != nil {
						b.Fatal(err)
					}
				}
				const perTx = 100
				now, later := FormatTime(t0), FormatTime(t0.Add(time.Second))
				// The process's user CPU time too: on the shared machine the
				// wall time of one variant moves by more than what the
				// triggers cost, its CPU time much less (the commits'
				// fsyncs are system time).
				cpu0, _ := userCPU()
				b.ResetTimer()
				for done := 0; done < b.N; done += perTx {
					// A transaction of its own rather than the store's write
					// path, which is not what is measured here.
					err := func() error {
						tx, err := s.db.BeginTxx(ctx, nil)
						if err != nil {
							return err
						}
						defer tx.Rollback()
						exec := func(q string) func(args ...any) error {
							return func(args ...any) error { _, err := tx.ExecContext(ctx, q, args...); return err }
						}
						if prepared {
							exec = func(q string) func(args ...any) error {
								st, err := tx.PreparexContext(ctx, q)
								if err != nil {
									return func(...any) error { return err }
								}
								return func(args ...any) error { _, err := st.ExecContext(ctx, args...); return err }
							}
						}
						ins, cl, co := exec(insert), exec(claim), exec(complete)
						for range min(perTx, b.N-done) {
							id := ids.New(ids.Job)
							if err := errors.Join(ins(id, a.ID, now, now, now), cl(later, now, id),
								co(ids.NewReportID(), later, later, id)); err != nil {
								return err
							}
						}
						return tx.Commit()
					}()
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "us/job")
				if cpu1, ok := userCPU(); ok {
					b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(b.N), "user-us/job")
				}
			})
		}
	}
}
