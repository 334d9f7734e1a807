package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// AddRateCounts adds this node's requests per account in the rate-limit
// window starting at window to the shared counts, drops the counts of
// earlier windows, and returns the window's totals over every node
// (internal/sharedrate).
func (s *Store) AddRateCounts(ctx context.Context, window time.Time, deltas map[string]int) (map[string]int, error) {
	window = ms(window)
	totals := map[string]int{}
	err := s.withTx(ctx, func(tx *sqlx.Tx) error {
		clear(totals)
		for account, n := range deltas {
			if n <= 0 {
				continue
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO rate_windows AS w (account_id, window_start, requests) VALUES ($1, $2, $3)
				ON CONFLICT (window_start, account_id) DO UPDATE SET requests = w.requests + excluded.requests`,
				account, window, n); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM rate_windows WHERE window_start < $1`, window); err != nil {
			return err
		}
		var rows []struct {
			Account  string `db:"account_id"`
			Requests int    `db:"requests"`
		}
		if err := tx.SelectContext(ctx, &rows, `SELECT account_id, requests FROM rate_windows WHERE window_start = $1`, window); err != nil {
			return err
		}
		for _, r := range rows {
			totals[r.Account] = r.Requests
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("shared rate counts: %w", err)
	}
	return totals, nil
}
