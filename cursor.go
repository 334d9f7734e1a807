package locrisk

// Paging of the lists ordered newest first by creation time and id (jobs,
// batches, webhook endpoints: ListJobs in service.go). The cursor is the
// API's, not a store's: a client may hold one across a restart, or get it
// from one node and hand it to another, so every store makes and reads the
// one format here and keeps only its SQL keyset condition.

import (
	"encoding/base64"
	"strings"
	"time"
)

// Page bounds of the cursor lists: a page holds DefaultPageLimit items
// unless the caller asks for another number, and never more than
// MaxPageLimit.
const (
	DefaultPageLimit = 20
	MaxPageLimit     = 1000
)

// Page is one page's request: at most Limit rows after the row the cursor
// named, by (created DESC, id DESC).
type Page struct {
	Limit int
	// AfterCreated and AfterID are the last row of the previous page;
	// AfterID is "" on the first page.
	AfterCreated time.Time
	AfterID      string
}

// NewPage checks cursor ("" = from the newest) and bounds limit (<= 0
// means DefaultPageLimit; capped at MaxPageLimit). A cursor that is
// malformed, or names an id that validID refuses (one made for a list of
// other ids), is ErrBadCursor.
func NewPage(limit int, cursor string, validID func(id string) bool) (Page, error) {
	if limit <= 0 {
		limit = DefaultPageLimit
	}
	p := Page{Limit: min(limit, MaxPageLimit)}
	if cursor == "" {
		return p, nil
	}
	var err error
	if p.AfterCreated, p.AfterID, err = DecodeCursor(cursor, validID); err != nil {
		return Page{}, err
	}
	return p, nil
}

// First reports whether p starts at the newest row (no keyset condition).
func (p Page) First() bool { return p.AfterID == "" }

// Fetch is how many rows a store reads for p: one more than the page, which
// tells whether a next page exists.
func (p Page) Fetch() int { return p.Limit + 1 }

// PageRows trims rows, read newest first with p.Fetch() as their limit, to
// the page, and returns the cursor of the next page, "" on the last one.
// key gives a row's creation time and id.
func PageRows[T any](p Page, rows []T, key func(T) (created time.Time, id string)) ([]T, string) {
	if len(rows) <= p.Limit {
		return rows, ""
	}
	rows = rows[:p.Limit]
	return rows, EncodeCursor(key(rows[len(rows)-1]))
}

// A cursor is base64url (no padding) of cursorVersion NUL created NUL id,
// created in cursorTimeLayout: UTC to the millisecond, every stored time's
// precision. It is the SQLite store's form, which clients of the default
// store already hold.
const (
	cursorVersion    = "v1"
	cursorTimeLayout = "2006-01-02T15:04:05.000Z"
)

// legacyCursorVersion marks the form the PostgreSQL store used to hand out
// (created in RFC 3339 with nanoseconds); DecodeCursor still reads it, so
// a cursor a client got from such a node goes on working.
const legacyCursorVersion = "1"

// EncodeCursor is the cursor of the row created at created with id.
func EncodeCursor(created time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorVersion + "\x00" + created.UTC().Format(cursorTimeLayout) + "\x00" + id))
}

// DecodeCursor reads a cursor of EncodeCursor's form, or of the legacy
// PostgreSQL form; anything else, or an id validID refuses, is
// ErrBadCursor.
func DecodeCursor(c string, validID func(id string) bool) (created time.Time, id string, err error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, "", ErrBadCursor
	}
	parts := strings.Split(string(b), "\x00")
	if len(parts) != 3 || !validID(parts[2]) {
		return time.Time{}, "", ErrBadCursor
	}
	switch parts[0] {
	case cursorVersion:
		// Fixed width only: the layout alone would let other widths pass.
		if len(parts[1]) != len(cursorTimeLayout) {
			return time.Time{}, "", ErrBadCursor
		}
		created, err = time.Parse(cursorTimeLayout, parts[1])
	case legacyCursorVersion:
		created, err = time.Parse(time.RFC3339Nano, parts[1])
	default:
		return time.Time{}, "", ErrBadCursor
	}
	if err != nil {
		return time.Time{}, "", ErrBadCursor
	}
	return created.UTC(), parts[2], nil
}

// Webhook deliveries are listed by count alone, without a cursor: at most
// MaxPageLimit, DefaultDeliveryListLimit unless asked.
const DefaultDeliveryListLimit = 50

// DeliveryListLimit bounds the limit of ListWebhookDeliveries: <= 0 means
// DefaultDeliveryListLimit, and it is capped at MaxPageLimit.
func DeliveryListLimit(limit int) int {
	if limit <= 0 {
		return DefaultDeliveryListLimit
	}
	return min(limit, MaxPageLimit)
}
