package server

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/view"
)

// Error is an API error: a stable machine code from codeStatus and a message
// for people. Handlers return it (or wrap it) and writeError turns it into
// the {error: {code, message, requestId}} body with the code's status.
type Error struct {
	Code    string
	Message string
	// RetryAfter, when positive, is sent as the Retry-After header (whole
	// seconds, rounded up).
	RetryAfter time.Duration
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// errorf builds an *Error with a formatted message.
func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Error codes, every one the API answers with, as the error tables of
// docs/api.md (Errors) and docs/api-examples.md list them. Add a code here and in codeStatus below; nowhere else.
const (
	codeInvalidAPIKey          = "invalid_api_key"
	codeInsufficientScope      = "insufficient_scope"
	codeQuotaExceeded          = "quota_exceeded"
	codeRateLimitExceeded      = "rate_limit_exceeded"
	codeInvalidRequest         = "invalid_request"
	codeInvalidLatitude        = "invalid_latitude"
	codeInvalidLongitude       = "invalid_longitude"
	codeInvalidIdempotencyKey  = "invalid_idempotency_key"
	codeInvalidLimit           = "invalid_limit"
	codeInvalidCursor          = "invalid_cursor"
	codeInvalidStatus          = "invalid_status"
	codeInvalidDetail          = "invalid_detail"
	codeInvalidReportID        = "invalid_report_id"
	codeReportJobNotFound      = "report_job_not_found"
	codeReportNotFound         = "report_not_found"
	codeBatchNotFound          = "batch_not_found"
	codeInvalidName            = "invalid_name"
	codeInvalidItems           = "invalid_items"
	codeInvalidExternalID      = "invalid_external_id"
	codeTooManyItems           = "too_many_items"
	codeWebhookEndpointMissing = "webhook_endpoint_not_found"
	codeNotFound               = "not_found"
	codeMethodNotAllowed       = "method_not_allowed"
	codeIdempotencyConflict    = "idempotency_conflict"
	codeJobNotRetryable        = "job_not_retryable"
	codePayloadTooLarge        = "payload_too_large"
	codeUnsupportedMediaType   = "unsupported_media_type"
	codeUnsupportedLocation    = "unsupported_location"
	codeInternal               = "internal_error"
	codeInvalidDays            = "invalid_days"
	codeInvalidBucket          = "invalid_bucket"
	codeInvalidHours           = "invalid_hours"
	codeInvalidURL             = "invalid_url"
	codeInvalidEvents          = "invalid_events"
	codeEndpointLimitReached   = "endpoint_limit_reached"
	codeServerBusy             = "server_busy"
	codeHeadersTooLarge        = "headers_too_large"
	codeDatabaseBusy           = "database_busy"
	codeStorageFull            = "storage_full"
	codeDatabaseUnavailable    = "database_unavailable"
	codeTooManyInFlight        = "too_many_requests_in_flight"
	codeWebhookDeliveryMissing = "webhook_delivery_not_found"
	codeEndpointDisabled       = "webhook_endpoint_disabled"
	codeDeliveryNotFailed      = "delivery_not_failed"
	codeInvalidSince           = "invalid_since"
	codeInvalidMinScoreChange  = "invalid_min_score_change"
	codeCoordinateMismatch     = "coordinate_mismatch"
	codeWatchlistNotFound      = "watchlist_not_found"
	codeInvalidItemIDs         = "invalid_item_ids"
	codeInvalidChanged         = "invalid_changed"
	codeWatchlistFull          = "watchlist_full"
	codeRescoreTooSoon         = "rescore_too_soon"
)

// codeStatus is the one table from error code to HTTP status. A code that
// is missing here is a programming error; writeError answers 500 for it.
var codeStatus = map[string]int{
	codeInvalidAPIKey:     http.StatusUnauthorized,
	codeInsufficientScope: http.StatusForbidden,
	codeQuotaExceeded:     http.StatusTooManyRequests,
	codeRateLimitExceeded: http.StatusTooManyRequests,
	codeTooManyInFlight:   http.StatusTooManyRequests,

	codeInvalidRequest:        http.StatusBadRequest,
	codeInvalidLatitude:       http.StatusBadRequest,
	codeInvalidLongitude:      http.StatusBadRequest,
	codeInvalidIdempotencyKey: http.StatusBadRequest,
	codeInvalidLimit:          http.StatusBadRequest,
	codeInvalidCursor:         http.StatusBadRequest,
	codeInvalidStatus:         http.StatusBadRequest,
	codeInvalidDetail:         http.StatusBadRequest,
	codeInvalidReportID:       http.StatusBadRequest,
	codeInvalidName:           http.StatusBadRequest,
	codeInvalidItems:          http.StatusBadRequest,
	codeInvalidExternalID:     http.StatusBadRequest,
	codeTooManyItems:          http.StatusBadRequest,
	// Codes of later features (usage, observability, webhooks), listed now
	// so the table stays the one place.
	codeInvalidDays:          http.StatusBadRequest,
	codeInvalidBucket:        http.StatusBadRequest,
	codeInvalidHours:         http.StatusBadRequest,
	codeInvalidURL:           http.StatusBadRequest,
	codeInvalidEvents:        http.StatusBadRequest,
	codeEndpointLimitReached: http.StatusBadRequest,
	// Report changes (reports.go); the minScoreChange code is the
	// watchlists' too.
	codeInvalidSince:          http.StatusBadRequest,
	codeInvalidMinScoreChange: http.StatusBadRequest,
	// Watchlists (watchlists.go).
	codeInvalidItemIDs:    http.StatusBadRequest,
	codeInvalidChanged:    http.StatusBadRequest,
	codeWatchlistFull:     http.StatusBadRequest,
	codeWatchlistNotFound: http.StatusNotFound,
	codeRescoreTooSoon:    http.StatusTooManyRequests,

	// A body declared as something other than JSON (body.go,
	// checkJSONContentType).
	codeUnsupportedMediaType: http.StatusUnsupportedMediaType,

	codeReportJobNotFound:      http.StatusNotFound,
	codeReportNotFound:         http.StatusNotFound,
	codeBatchNotFound:          http.StatusNotFound,
	codeWebhookEndpointMissing: http.StatusNotFound,
	codeWebhookDeliveryMissing: http.StatusNotFound,
	codeNotFound:               http.StatusNotFound,

	codeMethodNotAllowed:    http.StatusMethodNotAllowed,
	codeIdempotencyConflict: http.StatusConflict,
	codeJobNotRetryable:     http.StatusConflict,
	codeEndpointDisabled:    http.StatusConflict,
	codeDeliveryNotFailed:   http.StatusConflict,
	codePayloadTooLarge:     http.StatusRequestEntityTooLarge,
	codeHeadersTooLarge:     http.StatusRequestHeaderFieldsTooLarge,
	codeUnsupportedLocation: http.StatusUnprocessableEntity,
	codeCoordinateMismatch:  http.StatusUnprocessableEntity,
	codeInternal:            http.StatusInternalServerError,
	codeServerBusy:          http.StatusServiceUnavailable,
	codeDatabaseBusy:        http.StatusServiceUnavailable,
	codeStorageFull:         http.StatusServiceUnavailable,
	codeDatabaseUnavailable: http.StatusServiceUnavailable,
}

// databaseBusyRetryAfter is the Retry-After of database_busy: another
// process's write lock is usually held for moments (a command line write),
// and a client that comes back after a second finds it gone.
const databaseBusyRetryAfter = time.Second

// writeQueueRetryAfter is the Retry-After of server_busy for writes queued
// too long in this server: the queue drains at hundreds of writes a second.
const writeQueueRetryAfter = time.Second

// storageFullRetryAfter is the Retry-After of storage_full: room comes
// back when an operator frees space, in minutes rather than seconds, and
// clients retrying every second would only add refused writes meanwhile.
const storageFullRetryAfter = 30 * time.Second

// databaseUnavailableRetryAfter is the Retry-After of
// database_unavailable: a PostgreSQL server restarting is back in
// seconds, and the pool reconnects by itself.
const databaseUnavailableRetryAfter = 5 * time.Second

// storeError maps a store error to an API error. notFound is the code for
// locrisk.ErrNotFound, which depends on the resource asked for. Errors the
// table does not know are returned unchanged and become 500s.
func storeError(err error, notFound string, now time.Time) error {
	var qe *locrisk.QuotaError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, locrisk.ErrNotFound):
		return &Error{Code: notFound, Message: notFoundMessage(notFound)}
	case errors.As(err, &qe):
		return &Error{
			Code:       codeQuotaExceeded,
			Message:    fmt.Sprintf("the monthly report job quota is used up; it resets at %s", view.Time(qe.ResetsAt)),
			RetryAfter: qe.ResetsAt.Sub(now),
		}
	case errors.Is(err, locrisk.ErrQuotaExceeded):
		return &Error{Code: codeQuotaExceeded, Message: "the monthly report job quota is used up"}
	case errors.Is(err, locrisk.ErrIdempotencyConflict):
		return &Error{Code: codeIdempotencyConflict, Message: "this Idempotency-Key was already used with a different request body"}
	case errors.Is(err, locrisk.ErrNotRetryable):
		return &Error{Code: codeJobNotRetryable, Message: "only a failed job whose error is transient can be retried"}
	case errors.Is(err, locrisk.ErrEndpointDisabled):
		return &Error{Code: codeEndpointDisabled, Message: "this webhook endpoint is disabled; create a new one"}
	case errors.Is(err, locrisk.ErrDeliveryNotFailed):
		return &Error{Code: codeDeliveryNotFailed, Message: "only a failed delivery can be redelivered"}
	case errors.Is(err, locrisk.ErrWatchlistFull):
		return errorf(codeWatchlistFull, "%v; remove items first", err)
	case errors.Is(err, locrisk.ErrEndpointLimit):
		return errorf(codeEndpointLimitReached, "this account already has %d active webhook endpoints; disable one first", locrisk.MaxActiveEndpoints)
	case errors.Is(err, locrisk.ErrBadCursor):
		return &Error{Code: codeInvalidCursor, Message: "cursor is not a cursor this API returned"}
	case errors.Is(err, locrisk.ErrBusy):
		return &Error{Code: codeDatabaseBusy, Message: "the database is locked by another process; nothing was changed, try again shortly",
			RetryAfter: databaseBusyRetryAfter}
	case errors.Is(err, locrisk.ErrWriteQueue):
		// This server's own writes queued past the store's queue wait:
		// load, not a lock held elsewhere (docs/operations.md, Limits and defaults).
		return &Error{Code: codeServerBusy, Message: "the server is busy with writes; nothing was changed, try again shortly",
			RetryAfter: writeQueueRetryAfter}
	case errors.Is(err, locrisk.ErrStorageFull):
		// The disk (or the database) has no room for the write: the
		// server is unavailable for writes until space is freed, and
		// /readyz says so (docs/api.md, storage_full).
		return &Error{Code: codeStorageFull, Message: "the server's storage is full; nothing was changed, try again later",
			RetryAfter: storageFullRetryAfter}
	case errors.Is(err, locrisk.ErrUnavailable):
		// The database server is away, restarting or out of resources
		// (the PostgreSQL store's classify): retryable, never a 500.
		return &Error{Code: codeDatabaseUnavailable,
			Message:    "the database is unavailable (restarting or unreachable); try again shortly, with the same Idempotency-Key for a creation",
			RetryAfter: databaseUnavailableRetryAfter}
	case errors.Is(err, locrisk.ErrClosed):
		// A write begun while the server shuts down, after its store
		// stopped taking writes: the next server will take it.
		return &Error{Code: codeServerBusy, Message: "the server is shutting down; nothing was changed, try again shortly",
			RetryAfter: writeQueueRetryAfter}
	}
	return err
}

func notFoundMessage(code string) string {
	switch code {
	case codeReportJobNotFound:
		return "no report job with this id exists for this account"
	case codeReportNotFound:
		return "no report with this id exists for this account"
	case codeBatchNotFound:
		return "no batch with this id exists for this account"
	case codeWebhookEndpointMissing:
		return "no webhook endpoint with this id exists for this account"
	case codeWebhookDeliveryMissing:
		return "no webhook delivery with this id exists for this account"
	case codeWatchlistNotFound:
		return "no watchlist with this id exists for this account"
	}
	return "not found"
}

// errorBody is the error response shape (docs/api.md, Errors).
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	RequestID string `json:"requestId"`
}

// writeError writes err as the error shape. An *Error (possibly wrapped)
// gives its code and status; anything else is logged and answered with a
// 500 whose message reveals nothing of the cause.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *Error
	if !errors.As(err, &ae) && unavailable(err) {
		// A handler that returned a store error without storeError (it
		// expects no not-found, say) still answers a busy database, a
		// full write queue, a full disk or a closing store with 503, not
		// 500.
		err = storeError(err, codeNotFound, s.now())
	}
	if !errors.As(err, &ae) {
		s.log.ErrorContext(r.Context(), "request failed", "request_id", requestID(r), "err", err)
		ae = &Error{Code: codeInternal, Message: "internal error; quote the requestId when reporting it"}
	}
	status, ok := codeStatus[ae.Code]
	if !ok {
		s.log.ErrorContext(r.Context(), "error code missing from the status table", "code", ae.Code, "request_id", requestID(r))
		status = http.StatusInternalServerError
	}
	if ae.RetryAfter > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(ceilSeconds(ae.RetryAfter)))
	}
	writeJSON(w, status, errorBody{Error: errorDetail{Code: ae.Code, Message: ae.Message, RequestID: requestID(r)}})
}

// unavailable reports whether err is a store's refusal of a write that
// says nothing of the request: storeError answers each with 503.
func unavailable(err error) bool {
	for _, e := range []error{locrisk.ErrBusy, locrisk.ErrWriteQueue, locrisk.ErrStorageFull, locrisk.ErrUnavailable, locrisk.ErrClosed} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// ceilSeconds rounds d up to whole seconds, at least 1, for Retry-After and
// RateLimit-Reset (0 would invite an immediate, still refused, retry).
func ceilSeconds(d time.Duration) int64 {
	n := int64(math.Ceil(d.Seconds()))
	if n < 1 {
		n = 1
	}
	return n
}
