// Package sqlpurge holds the SQL of the retention purge that both stores
// (internal/sqlite and internal/pgstore) run alike: which rows a job owns
// and the order they go in, so that no foreign key is broken, and when a
// job's webhook deliveries are done. The fragments are portable SQL; how
// the keys are picked and bound stays in each store.
package sqlpurge

import "github.com/locrisk/locrisk"

// Delete is one DELETE of a purge step, with the counter its rows are
// added to.
type Delete struct {
	SQL   string
	Count *int64
}

// JobDeletes delete what the jobs jobsOf selects own (a SELECT of job
// ids, or a placeholder for them): their webhook deliveries, then their
// events, then their reports, counted in c. The jobs themselves go after
// these, in the store's own statement.
func JobDeletes(jobsOf string, c *locrisk.PurgeCounts) []Delete {
	return []Delete{
		{`DELETE FROM webhook_deliveries WHERE event_id IN (SELECT id FROM webhook_events WHERE job_id IN (` + jobsOf + `))`, &c.Deliveries},
		{`DELETE FROM webhook_events WHERE job_id IN (` + jobsOf + `)`, &c.Events},
		{`DELETE FROM reports WHERE job_id IN (` + jobsOf + `)`, &c.Reports},
	}
}

// NoPendingDelivery is the condition that no event e whose job meets
// jobCond (a condition on e.job_id) has a webhook delivery still pending:
// a job, or a batch, goes only once its deliveries are done.
func NoPendingDelivery(jobCond string) string {
	return `NOT EXISTS (SELECT 1 FROM webhook_events e JOIN webhook_deliveries d ON d.event_id = e.id
		WHERE ` + jobCond + ` AND d.status = 'pending')`
}

// NotWatched is the condition that the job j (an alias of report_jobs)
// is none of the three jobs a watch item names: its latest job, and the
// jobs of its current and previous reports, which an item keeps however
// old they are (docs/api.md, Retention). A job of a removed item is an
// ordinary one.
func NotWatched(j string) string {
	return `(` + j + `.watch_item_id IS NULL OR NOT EXISTS (SELECT 1 FROM watch_items w WHERE w.id = ` + j + `.watch_item_id
		AND (w.job_id = ` + j + `.id OR w.report_id = ` + j + `.report_id OR w.previous_report_id = ` + j + `.report_id)))`
}
