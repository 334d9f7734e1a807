package locrisk

import (
	"errors"
	"time"
)

// Delivery statuses (webhook_deliveries.status).
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
)

// MaxActiveEndpoints is the number of active endpoints an account may have.
const MaxActiveEndpoints = 20

// ErrEndpointLimit is returned by CreateWebhookEndpoint when the account
// already has MaxActiveEndpoints active endpoints.
var ErrEndpointLimit = errors.New("webhook endpoint limit reached")

// ErrEndpointDisabled is returned when a delivery is asked of a disabled
// endpoint (a test event, a redelivery).
var ErrEndpointDisabled = errors.New("webhook endpoint is disabled")

// ErrDeliveryNotFailed is returned by RedeliverWebhook for a delivery that
// is pending or succeeded.
var ErrDeliveryNotFailed = errors.New("webhook delivery is not failed")

// ErrorEndpointDisabled is the error recorded on deliveries that stop
// because their endpoint was disabled.
const ErrorEndpointDisabled = "endpoint disabled"

// WebhookEndpoint is an endpoint as the API shows it: never the secret.
//
// The db tags name the webhook_endpoints columns every store has; the
// events are stored as words (StoredEvents) and the times each store
// reads itself.
type WebhookEndpoint struct {
	ID          string     `db:"id"`
	AccountID   string     `db:"account_id"`
	Name        string     `db:"name"`
	URL         string     `db:"url"`
	Events      []string   `db:"-"`
	Active      bool       `db:"is_active"`
	CreatedUTC  time.Time  `db:"-"`
	DisabledUTC *time.Time `db:"-"`
}

// NewWebhookEndpoint describes an endpoint to create. The caller has
// validated every field; a store checks only what it needs to keep it
// (Validate) and enforces the active-endpoint limit.
type NewWebhookEndpoint struct {
	AccountID string
	Name      string
	URL       string
	Events    []string
}

// WebhookEvent is an event to put in the outbox. Body is the exact JSON that
// will be sent on every attempt.
type WebhookEvent struct {
	ID        string // evt_...
	AccountID string
	Type      string
	// JobID is the job a job event is about; for batch.completed the job
	// whose final state completed the batch (so the event is purged with
	// the batch's jobs, internal/sqlite/purge.go); "" for webhook.test.
	JobID      string
	Body       []byte
	CreatedUTC time.Time
}

// WebhookDelivery is a delivery as the API lists it. The db tags name the
// columns every store's delivery query selects; the times each store reads
// itself, and JobID goes through DeliveryJobID.
type WebhookDelivery struct {
	ID             string     `db:"id"`
	EndpointID     string     `db:"endpoint_id"`
	EventID        string     `db:"event_id"`
	Event          string     `db:"type"`   // event type
	JobID          *string    `db:"job_id"` // the job of a report.job.* event; nil for the others
	Status         string     `db:"status"`
	Attempts       int        `db:"attempts"`
	ResponseStatus *int       `db:"response_status"`
	Error          *string    `db:"error"`
	CreatedUTC     time.Time  `db:"-"`
	LastAttemptUTC *time.Time `db:"-"`
	NextAttemptUTC *time.Time `db:"-"`
	DeliveredUTC   *time.Time `db:"-"`
}

// DeliveryAttempt is the outcome of one attempt, to record.
type DeliveryAttempt struct {
	Success        bool
	ResponseStatus int    // 0: no response arrived
	Error          string // "" on success; short and sanitised
	Started        time.Time
	// NextAttempt is when to try again after a failure; nil when the
	// schedule is exhausted and a failure is final.
	NextAttempt *time.Time
}

// DeliveryTask is a claimed delivery: everything one attempt needs. Lease
// is the claim token: a claim sets the delivery's lease expiry, and the same
// value must be presented to record or release the attempt. A delivery is
// claimed again only after its lease has passed, so a later claim always
// carries a later lease and the value names one claim.
type DeliveryTask struct {
	ID         string
	EndpointID string
	AccountID  string
	EventID    string
	EventType  string
	JobID      string
	URL        string
	Secret     string
	Body       []byte
	Attempts   int // attempts recorded before this one
	// ScheduleStart is Attempts when the current retry schedule began: 0,
	// or the count at a redelivery. The schedule's position is
	// Attempts - ScheduleStart.
	ScheduleStart int
	Lease         time.Time
}

// DeliveryLimits bound the attempts in flight (unexpired leases) that a
// claim may add to; both must be positive.
type DeliveryLimits struct {
	// PerEndpoint is the most attempts in flight to one endpoint: a slow
	// receiver holds at most this many workers.
	PerEndpoint int
	// PerAccount is the most attempts in flight to one account's
	// endpoints together: an account with many slow receivers holds at
	// most this many workers.
	PerAccount int
}
