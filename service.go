package locrisk

import (
	"context"
	"time"
)

// The service interfaces: what the server, the workers and the commands ask
// of a store, one interface per concern, so that each of them names only
// the operations it uses and a second store (docs/architecture.md) fits
// beside the SQLite one. Every implementation must pass the behaviour
// suite in internal/storetest, which also pins what the interfaces leave
// implicit: the four concurrency invariants (a quota is never overshot,
// one idempotency key makes one job, a job is claimed by one worker at a
// time and completed once, accounts take turns).
//
// Times passed in are the caller's clock; every stored time is UTC with
// millisecond precision. Errors are the domain's (errors.go): ErrNotFound
// for an unknown id or another account's, ErrInvalid for values out of
// range, ErrBusy and ErrWriteQueue when the store cannot take a write in
// time, ErrStorageFull when it has no room for one, ErrClosed after Close.

// Accounts manages accounts (locrisk accounts, docs/operations.md).
type Accounts interface {
	// CreateAccount makes an account. monthlyQuota may be 0 (an account
	// that cannot create jobs); rateLimit must be positive.
	CreateAccount(ctx context.Context, name string, monthlyQuota, rateLimit int) (Account, error)
	// GetAccount returns the account.
	GetAccount(ctx context.Context, id string) (Account, error)
	// ListAccounts returns every account, oldest first.
	ListAccounts(ctx context.Context) ([]Account, error)
	// UpdateAccount applies u and returns the account as it now is; the
	// next job creation sees a new quota.
	UpdateAccount(ctx context.Context, id string, u AccountUpdate) (Account, error)
	// SetAccountDisabled disables or enables an account; disabling a
	// disabled account keeps the first time.
	SetAccountDisabled(ctx context.Context, id string, disabled bool) (Account, error)
}

// Keys manages API keys (docs/api.md, Authentication).
type Keys interface {
	// CreateKey makes a key for an existing account and returns it with
	// its secret, which is not stored and cannot be shown again.
	CreateKey(ctx context.Context, k NewKey) (APIKey, string, error)
	// ListKeys returns the keys of one account, or of all when accountID
	// is "", oldest first.
	ListKeys(ctx context.Context, accountID string) ([]APIKey, error)
	// RevokeKey revokes a key at once; revoking twice keeps the first
	// time.
	RevokeKey(ctx context.Context, keyID string) error
	// KeyBySecret finds a key and its account by the secret. Revoked and
	// expired keys and disabled accounts are returned too: whether the key
	// may be used is the caller's decision (APIKey.Usable, AllowsIP).
	KeyBySecret(ctx context.Context, secret string) (APIKey, Account, error)
	// RecordKeyUse stores last-use times; a time earlier than the stored
	// one does not move it back, and unknown keys are skipped.
	RecordKeyUse(ctx context.Context, uses []KeyUse) error
}

// Jobs creates and reads report jobs and their reports (docs/api.md,
// Report jobs).
type Jobs interface {
	// CreateJob creates a queued job, runnable at now, unless the
	// idempotency key replays an earlier one (replayed true, no quota
	// used; another request under the same key is ErrIdempotencyConflict)
	// or the account's monthly quota is used up (*QuotaError). The checks
	// and the insert are atomic: concurrent requests under one key create
	// one job, and concurrent creates never overshoot the quota.
	CreateJob(ctx context.Context, j NewJob, now time.Time) (job Job, replayed bool, err error)
	// GetJob returns the account's job.
	GetJob(ctx context.Context, accountID, jobID string) (Job, error)
	// ListJobs returns up to limit of the account's jobs, newest first,
	// after the opaque cursor ("" from the newest), only those of one
	// status unless status is ""; the next cursor is "" on the last page.
	// A malformed cursor is ErrBadCursor.
	ListJobs(ctx context.Context, accountID, status string, limit int, cursor string) ([]Job, string, error)
	// RetryJob puts the account's failed job back in the queue when its
	// error was transient; anything else is ErrNotRetryable.
	RetryJob(ctx context.Context, accountID, jobID string, now time.Time) (Job, error)
	// GetReport returns the account's report.
	GetReport(ctx context.Context, accountID, reportID string) (Report, error)
}

// JobQueue is the durable queue the job scheduler (internal/jobs) works.
// A claim is a lease: while it runs, no other owner can claim the job or
// record its outcome (ErrLeaseLost), so a job is completed at most once.
type JobQueue interface {
	// ClaimJob takes the next runnable job for owner until now+lease: a
	// job whose lease expired first, otherwise the accounts take turns
	// (the account whose last claim is the oldest gets its oldest runnable
	// job). ok is false when nothing is runnable.
	ClaimJob(ctx context.Context, owner string, lease time.Duration, now time.Time) (job Job, ok bool, err error)
	// CompleteJob stores the report and marks the job completed in one
	// transaction, with the JobFinalHooks, if owner still holds it.
	CompleteJob(ctx context.Context, jobID, owner string, r Report, now time.Time) (Job, error)
	// FailJob marks the job failed, with the JobFinalHooks, if owner
	// still holds it.
	FailJob(ctx context.Context, jobID, owner, code, msg string, transient bool, now time.Time) (Job, error)
	// RetryLater puts a held job back, runnable from runAfter, keeping
	// the error for operators.
	RetryLater(ctx context.Context, jobID, owner string, runAfter time.Time, code, msg string, now time.Time) error
	// ReleaseJob hands a held job back without counting the attempt.
	ReleaseJob(ctx context.Context, jobID, owner string, now time.Time) error
}

// Batches creates and reads batches (docs/api.md, Batches).
type Batches interface {
	// CreateBatch creates a batch, its items and one queued job per valid
	// item, all or nothing, with CreateJob's idempotency and quota rules
	// (the quota must cover every valid item).
	CreateBatch(ctx context.Context, nb NewBatch, now time.Time) (b Batch, replayed bool, err error)
	// GetBatch returns the account's batch with its state derived from its
	// items.
	GetBatch(ctx context.Context, accountID, batchID string) (Batch, error)
	// ListBatches pages the account's batches like ListJobs.
	ListBatches(ctx context.Context, accountID string, limit int, cursor string) ([]Batch, string, error)
	// BatchItems calls fn for each item of the account's batch, in input
	// order, stopping at fn's first error.
	BatchItems(ctx context.Context, accountID, batchID string, fn func(BatchItem) error) error
}

// Watchlists creates, reads and changes watchlists and their items
// (docs/api.md, Watchlists).
type Watchlists interface {
	// CreateWatchlist creates the list nw with its items, each with a
	// queued first job (bucket bulk), all or nothing, taking one unit of
	// quota per item (*QuotaError when they do not fit).
	CreateWatchlist(ctx context.Context, nw NewWatchlist, now time.Time) (Watchlist, []WatchItem, error)
	// GetWatchlist returns the account's list.
	GetWatchlist(ctx context.Context, accountID, watchlistID string) (Watchlist, error)
	// ListWatchlists pages the account's lists like ListJobs.
	ListWatchlists(ctx context.Context, accountID string, limit int, cursor string) ([]Watchlist, string, error)
	// DeleteWatchlist deletes the account's list, its items and their
	// planned re-scores; the items' jobs and reports stay, as ordinary
	// ones.
	DeleteWatchlist(ctx context.Context, accountID, watchlistID string) error
	// AddWatchItems adds items to the account's list as CreateWatchlist
	// does (ErrWatchlistFull past MaxWatchlistItems).
	AddWatchItems(ctx context.Context, accountID, watchlistID string, items []NewWatchItem, now time.Time) ([]WatchItem, error)
	// RemoveWatchItems removes the list's items of these ids, with their
	// planned re-scores, and returns the ids removed (those of the list,
	// in the order given, once each).
	RemoveWatchItems(ctx context.Context, accountID, watchlistID string, itemIDs []string) ([]string, error)
	// ListWatchItems pages the list's items like ListJobs; with changed
	// set, only those whose Changed is *changed (true: their last
	// re-score changed them materially).
	ListWatchItems(ctx context.Context, accountID, watchlistID string, changed *bool, limit int, cursor string) ([]WatchItem, string, error)
	// RequestRescore plans a re-score of every item of the list in the
	// re-score lane (RequestRescoreIn's rules: *RescoreTooSoonError).
	RequestRescore(ctx context.Context, accountID, watchlistID string, now time.Time) (RescoreRequest, error)
}

// RescoreQueue is the low-priority lane that re-scores watch items
// (docs/api.md, Re-scoring; internal/jobs runs it).
type RescoreQueue interface {
	// PlanRescores plans, once per item and pair of data and
	// methodology versions whatever the number of nodes planning, a
	// re-score to v of every watch item whose current report was made
	// with other versions (or that has none), that has no job open and
	// whose account is not disabled (a later plan takes it once it is
	// enabled again), and
	// drops the plans not started of other version changes. It returns
	// how many it planned now.
	PlanRescores(ctx context.Context, v ScoreVersions, now time.Time) (int, error)
	// ClaimRescore starts the next planned re-score a node serving v
	// may take (ClaimRescoreIn): its job, processing under owner's lease
	// until now+lease. ok is false when nothing is left.
	ClaimRescore(ctx context.Context, owner string, v ScoreVersions, lease time.Duration, now time.Time) (job Job, ok bool, err error)
	// RescoreBacklog reads the lane's backlog, for operators.
	RescoreBacklog(ctx context.Context) (RescoreBacklog, error)
}

// Webhooks manages endpoints and their deliveries as the API shows them
// (docs/api.md, Webhooks).
type Webhooks interface {
	// CreateWebhookEndpoint stores an active endpoint with a fresh signing
	// secret, returned here only; past MaxActiveEndpoints it is
	// ErrEndpointLimit.
	CreateWebhookEndpoint(ctx context.Context, ne NewWebhookEndpoint, now time.Time) (WebhookEndpoint, string, error)
	// GetWebhookEndpoint returns the account's endpoint, active or not.
	GetWebhookEndpoint(ctx context.Context, accountID, id string) (WebhookEndpoint, error)
	// ListWebhookEndpoints pages the account's endpoints like ListJobs.
	ListWebhookEndpoints(ctx context.Context, accountID string, limit int, cursor string) ([]WebhookEndpoint, string, error)
	// DisableWebhookEndpoint marks the endpoint inactive and fails its
	// pending deliveries not in flight; disabling twice succeeds.
	DisableWebhookEndpoint(ctx context.Context, accountID, id string, now time.Time) error
	// ListWebhookDeliveries returns up to limit of the account's
	// deliveries, newest first, only endpointID's unless it is "".
	ListWebhookDeliveries(ctx context.Context, accountID, endpointID string, limit int) ([]WebhookDelivery, error)
	// QueueTestWebhook writes ev and one delivery of it to the endpoint,
	// whatever the endpoint subscribes to (ErrEndpointDisabled for a
	// disabled one).
	QueueTestWebhook(ctx context.Context, accountID, endpointID string, ev WebhookEvent) (WebhookDelivery, error)
	// RedeliverWebhook puts a failed delivery back to pending with the same
	// id and event (ErrDeliveryNotFailed, ErrEndpointDisabled otherwise).
	RedeliverWebhook(ctx context.Context, accountID, deliveryID string, now time.Time) (WebhookDelivery, error)
}

// WebhookOutbox is the delivery side of the outbox, as the delivery worker
// (internal/webhookworker) works it. Events enter it through a JobFinalHook
// inside a job's final transaction (internal/outbox).
type WebhookOutbox interface {
	// ClaimWebhookDelivery leases the next due delivery to an active
	// endpoint within limits until now+lease; accounts take turns. ok is
	// false when nothing is claimable. A claim that starts while a job's
	// final transaction is open must see that transaction's deliveries
	// once it commits: the outbox hook wakes the worker from inside it.
	ClaimWebhookDelivery(ctx context.Context, lease time.Duration, limits DeliveryLimits, now time.Time) (t DeliveryTask, ok bool, err error)
	// NextWebhookDue says when a claim with the same limits may next find
	// something; ok is false when nothing is pending.
	NextWebhookDue(ctx context.Context, limits DeliveryLimits, now time.Time) (due time.Time, ok bool, err error)
	// RecordWebhookAttempt records an attempt of the claimed task and ends
	// the claim, returning the delivery's new status (ErrLeaseLost when
	// the claim is no longer t's).
	RecordWebhookAttempt(ctx context.Context, t DeliveryTask, a DeliveryAttempt, now time.Time) (string, error)
	// ReleaseWebhookDelivery hands a claimed delivery back without
	// counting an attempt.
	ReleaseWebhookDelivery(ctx context.Context, t DeliveryTask) error
}

// Usage reads and records usage and request statistics (docs/api.md,
// Usage and Operations summary).
type Usage interface {
	// PeriodUsage returns the account's usage in now's billing period.
	PeriodUsage(ctx context.Context, accountID string, now time.Time) (PeriodUsage, error)
	// UsageHistory returns one entry per day and bucket for days days from
	// firstDay's UTC day, zeros included, oldest first, buckets in the
	// order given (none means all, in Buckets order).
	UsageHistory(ctx context.Context, accountID string, firstDay time.Time, days int, buckets []string) ([]DailyUsage, error)
	// AddRequestStats adds hourly request aggregates to the stored ones.
	AddRequestStats(ctx context.Context, rows []HourStats) error
	// RequestStats sums the account's aggregates of the hours that start
	// in [fromHour, toHour).
	RequestStats(ctx context.Context, accountID string, fromHour, toHour time.Time) (RequestCounts, error)
	// OpsSummary computes the job, batch and webhook parts of the
	// operations summary over [from, to), with at most failureLimit
	// recent failures.
	OpsSummary(ctx context.Context, accountID string, from, to time.Time, failureLimit int) (OpsSummary, error)
}

// Retention deletes what the retention policy allows (docs/operations.md,
// Retention).
type Retention interface {
	// Purge deletes what p allows in transactions of at most p.Batch rows
	// and returns the counts, with what it had committed on an error.
	Purge(ctx context.Context, p PurgePolicy) (PurgeCounts, error)
}

// ReferenceCache keeps the risk engine's computed reference between starts
// (internal/refcache).
type ReferenceCache interface {
	// LoadReference returns the body saved under key, or nil.
	LoadReference(ctx context.Context, key string) ([]byte, error)
	// SaveReference keeps body under key and drops every other key.
	SaveReference(ctx context.Context, key string, body []byte) error
}

// QueueStats reads the backlog the metrics show (internal/metrics).
type QueueStats interface {
	// QueueDepth reads the job queue's and the webhook outbox's backlog.
	QueueDepth(ctx context.Context) (QueueDepth, error)
}

// SigningKeys keeps the keys reports are signed with (docs/verification.md):
// one current key with its private half, sealed at rest like the webhook
// signing secrets, and every retired key's public half, kept for good.
type SigningKeys interface {
	// EnsureSigningKey stores k as the current key when there is none and
	// returns the current key, with created telling whether it is k.
	EnsureSigningKey(ctx context.Context, k SigningKey) (current SigningKey, created bool, err error)
	// RotateSigningKey retires the current key (if any) at k.CreatedUTC,
	// erasing its private half, and stores k as the current key, in one
	// transaction.
	RotateSigningKey(ctx context.Context, k SigningKey) error
	// CurrentSigningKey returns the current key with its private half;
	// ErrNotFound when there is none.
	CurrentSigningKey(ctx context.Context) (SigningKey, error)
	// ListSigningKeys returns every key, newest first, without private
	// halves.
	ListSigningKeys(ctx context.Context) ([]SigningKey, error)
}

// Store is every operation of the service: what `locrisk serve` assembles
// from one database. Operations only one backend has (SQLite's file
// statistics, vacuum and busy waits) are on that store's own type.
type Store interface {
	Accounts
	Keys
	Jobs
	JobQueue
	Batches
	Watchlists
	RescoreQueue
	Webhooks
	WebhookOutbox
	Usage
	Retention
	ReferenceCache
	QueueStats
	SigningKeys
	// ProbeWrite checks that a write could happen now, writing nothing
	// to the store (the readiness check, GET /readyz). Once a write has
	// been refused with ErrStorageFull it fails so too, until it finds
	// room again or a write commits.
	ProbeWrite(ctx context.Context) error
	// Close closes the store once the writes already begun have their
	// outcome; a write begun after fails with ErrClosed.
	Close() error
}
