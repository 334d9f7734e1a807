package sqlite

// How values are stored: times as fixed-width UTC text (TimeLayout), which
// sorts as time does, and optional values as NULL; and queryer, for the
// reads that run on the pool or inside a transaction.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// TimeLayout is the database's time format: UTC, millisecond precision,
// fixed width so text order is time order.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime renders t in the database's time format (UTC, milliseconds).
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// ParseTime parses a database time.
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(TimeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad stored time %q: %w", s, err)
	}
	return t, nil
}

// parseNullTime parses an optional database time.
func parseNullTime(ns sql.NullString) (*time.Time, error) {
	if !ns.Valid {
		return nil, nil
	}
	t, err := ParseTime(ns.String)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// present turns the error of a one-row read into whether the row exists:
// no row is not an error.
func present(err error) (bool, error) {
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// truncMs drops what the database cannot hold, so values returned by a
// create equal the same values read back later.
func truncMs(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

func nullString(p *string) sql.NullString {
	if p == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: *p, Valid: true}
}

func nullFloat(p *float64) sql.NullFloat64 {
	if p == nil {
		return sql.NullFloat64{}
	}
	return sql.NullFloat64{Float64: *p, Valid: true}
}

// queryer is what both *sqlx.DB and *sqlx.Tx offer, so read helpers work
// inside and outside a transaction.
type queryer interface {
	GetContext(ctx context.Context, dest any, query string, args ...any) error
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
}
