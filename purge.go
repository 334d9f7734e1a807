package locrisk

import (
	"time"
)

// DefaultPurgeBatch is how many rows one purge transaction deletes at most
// (of the kind it walks; a batch counts as its items).
const DefaultPurgeBatch = 500

// PurgePolicy says what Purge deletes.
type PurgePolicy struct {
	// Before is the retention cut-off: records that ended before it are
	// deleted (jobs by completed_utc, batches by completed_utc, disabled
	// endpoints by disabled_utc, keys by revocation or expiry, request
	// statistics by hour, quota counters of months that ended before it).
	// The zero time keeps them all (retention off).
	Before time.Time
	// Now places the idempotency keys' window: keys older than
	// IdempotencyTTL before it are deleted, whatever Before says.
	Now time.Time
	// Batch bounds the rows per transaction [DefaultPurgeBatch].
	Batch int
	// DryRun counts what would go, deleting nothing: every transaction is
	// rolled back instead of committed. It may count fewer webhook
	// endpoints than a real run deletes: an endpoint whose last deliveries
	// go with old jobs becomes deletable only once they are gone.
	DryRun bool
}

// MaxBatchItems is the most items (and so jobs) one batch holds
// (docs/api.md, Batches): a purge counts a batch as that many rows.
const MaxBatchItems = 100

// BatchesPerTx is how many batches one purge transaction deletes at most:
// p.Batch rows, a batch counting as MaxBatchItems, and at least one.
func (p PurgePolicy) BatchesPerTx() int { return max(1, p.Batch/MaxBatchItems) }

// QuotaCutoff is the start of the oldest month whose quota counter a purge
// keeps: the month of Before, which has not ended before it.
func (p PurgePolicy) QuotaCutoff() time.Time { return MonthStart(p.Before) }

// IdempotencyCutoff is the creation time at or before which an
// idempotency key has expired at p.Now (IdempotencyExpired).
func (p PurgePolicy) IdempotencyCutoff() time.Time { return p.Now.Add(-IdempotencyTTL) }

// IdempotencyExpired reports whether a key created at created is
// forgotten at now: it was made IdempotencyTTL or longer before, and a
// request under it creates afresh.
func IdempotencyExpired(created, now time.Time) bool { return !created.After(now.Add(-IdempotencyTTL)) }

// PurgeCounts is what a purge deleted (or, dry, would delete), by table.
type PurgeCounts struct {
	Jobs            int64 `json:"reportJobs"`
	Reports         int64 `json:"reports"`
	Batches         int64 `json:"batches"`
	BatchItems      int64 `json:"batchItems"`
	Events          int64 `json:"webhookEvents"`
	Deliveries      int64 `json:"webhookDeliveries"`
	Endpoints       int64 `json:"webhookEndpoints"`
	Keys            int64 `json:"apiKeys"`
	RequestStats    int64 `json:"requestStats"`
	QuotaCounters   int64 `json:"quotaCounters"`
	IdempotencyKeys int64 `json:"idempotencyKeys"`
}

// Total is the number of rows.
func (c PurgeCounts) Total() int64 {
	return c.Jobs + c.Reports + c.Batches + c.BatchItems + c.Events + c.Deliveries + c.Endpoints +
		c.Keys + c.RequestStats + c.QuotaCounters + c.IdempotencyKeys
}

// LogAttrs are the counts as slog key/value pairs, for the one line a
// purge run logs.
func (c PurgeCounts) LogAttrs() []any {
	return []any{"report_jobs", c.Jobs, "reports", c.Reports, "batches", c.Batches, "batch_items", c.BatchItems,
		"webhook_events", c.Events, "webhook_deliveries", c.Deliveries, "webhook_endpoints", c.Endpoints,
		"api_keys", c.Keys, "request_stats", c.RequestStats, "quota_counters", c.QuotaCounters,
		"idempotency_keys", c.IdempotencyKeys}
}

// Add adds o to c.
func (c *PurgeCounts) Add(o PurgeCounts) {
	c.Jobs += o.Jobs
	c.Reports += o.Reports
	c.Batches += o.Batches
	c.BatchItems += o.BatchItems
	c.Events += o.Events
	c.Deliveries += o.Deliveries
	c.Endpoints += o.Endpoints
	c.Keys += o.Keys
	c.RequestStats += o.RequestStats
	c.QuotaCounters += o.QuotaCounters
	c.IdempotencyKeys += o.IdempotencyKeys
}
