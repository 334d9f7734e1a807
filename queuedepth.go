package locrisk

import (
	"time"
)

// QueueDepth is the backlog of the two queues at one moment, as serve's
// metrics listener shows it (docs/operations.md, Metrics).
type QueueDepth struct {
	JobsQueued     int // report jobs waiting for a worker, backoffs included
	JobsProcessing int // report jobs a worker holds
	// OldestRunnable is the earliest run_after_utc of the queued jobs:
	// when the job that has waited longest became runnable (its creation,
	// or its retry). Zero when no job is queued; it may lie in the future
	// when every queued job is in a retry backoff.
	OldestRunnable   time.Time
	DeliveriesQueued int // webhook deliveries pending (due now or later)
}
