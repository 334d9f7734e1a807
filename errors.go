package locrisk

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors; callers test them with errors.Is.
var (
	ErrNotFound            = errors.New("not found")
	ErrIdempotencyConflict = errors.New("idempotency key reused with a different request")
	ErrQuotaExceeded       = errors.New("monthly report job quota exceeded")
	ErrNotRetryable        = errors.New("job is not retryable")
	ErrLeaseLost           = errors.New("job lease lost")
	ErrBadCursor           = errors.New("malformed cursor")
	ErrInvalid             = errors.New("invalid argument")
	// ErrBusy: another process held the store's write lock for longer
	// than the store waits (in SQLite, SQLITE_BUSY or SQLITE_LOCKED: a
	// sqlite3 shell in a transaction, a long command). Nothing was
	// written; the same call may succeed later.
	ErrBusy = errors.New("database is locked by another process")
	// ErrWriteQueue: a write waited too long behind this process's own
	// writers, none of them held up by another process. The server is
	// overloaded with writes; nothing was written, and the same call may
	// succeed later.
	ErrWriteQueue = errors.New("too many writes queued in this process")
	// ErrStorageFull: the store has no room for the write (in SQLite,
	// SQLITE_FULL: the disk or the user's quota is full, or the database
	// is at its page limit). Nothing was written; the same call may
	// succeed once space is freed.
	ErrStorageFull = errors.New("storage is full")
	// ErrUnavailable: the store could not be reached, or refused the
	// statement while it shuts down, restarts or runs out of resources
	// (in PostgreSQL, a lost or refused connection, SQLSTATE classes 08,
	// 53 other than 53100, 57P). A write in flight when the connection
	// went may or may not have committed; the same call may succeed
	// later, and one with an Idempotency-Key is safe to repeat.
	ErrUnavailable = errors.New("the database is unavailable")
)

// QuotaError is returned (wrapping ErrQuotaExceeded) when an account has no
// report jobs left in the current billing period.
type QuotaError struct {
	Limit    int       // the account's monthly quota
	Used     int       // jobs created this period
	ResetsAt time.Time // first instant of the next period (UTC)
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("%v: %d of %d used, resets at %s", ErrQuotaExceeded, e.Used, e.Limit, e.ResetsAt.Format(time.RFC3339))
}

// Unwrap makes errors.Is(err, ErrQuotaExceeded) hold.
func (e *QuotaError) Unwrap() error { return ErrQuotaExceeded }

// MonthStart returns the first instant of t's calendar month in UTC.
func MonthStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// NextMonthStart returns the first instant of the calendar month after t's (UTC).
func NextMonthStart(t time.Time) time.Time { return MonthStart(t).AddDate(0, 1, 0) }

// ErrClosed is the error of a write begun after the store was closed.
var ErrClosed = errors.New("store: closed")
