// Package sqlrow holds the two idioms both stores (internal/sqlite and
// internal/pgstore) wrap around a query's rows, so that each is written
// once: a missing row read as the domain's ErrNotFound, and stored rows
// turned into domain values by a conversion that may fail (a stored value
// that no longer parses). The SQL itself stays in each store.
package sqlrow

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/locrisk/locrisk"
)

// Got is the error of a read of one row of what (for example "account
// acct_1"): nil when it was read, locrisk.ErrNotFound when there is no such
// row, otherwise err, each said with what.
func Got(err error, what string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%s: %w", what, locrisk.ErrNotFound)
	default:
		return fmt.Errorf("read %s: %w", what, err)
	}
}

// Map converts rows in order with conv, stopping at the first error.
func Map[R, T any](rows []R, conv func(R) (T, error)) ([]T, error) {
	out := make([]T, 0, len(rows))
	for _, r := range rows {
		v, err := conv(r)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
