package sqlite

// Request statistics for the operations summary: per account and UTC hour,
// counts by outcome and a latency histogram, never a row per request. The
// server aggregates in memory and adds its aggregates here in batches
// (AddRequestStats), so the table sees one small transaction per second
// whatever the request rate.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/locrisk/locrisk"
)

// AddRequestStats adds the rows to the stored aggregates in one
// transaction: counters with an UPSERT, histograms merged here (the stored
// one is read inside the same write transaction, so nothing is lost to a
// concurrent writer, another process included).
func (s *Store) AddRequestStats(ctx context.Context, rows []locrisk.HourStats) error {
	if len(rows) == 0 {
		return nil
	}
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		for _, r := range rows {
			if err := addHourStats(ctx, tx, r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("add request stats: %w", err)
	}
	return nil
}

func addHourStats(ctx context.Context, tx *sqlx.Tx, r locrisk.HourStats) error {
	hour := FormatTime(r.Hour.UTC().Truncate(time.Hour))
	var stored string
	err := tx.GetContext(ctx, &stored, `SELECT latency_histogram FROM request_stats WHERE account_id = ? AND hour_utc = ?`, r.AccountID, hour)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("read %s %s: %w", r.AccountID, hour, err)
	}
	hist, err := locrisk.MergeLatencyHistogram([]byte(stored), r.Latency)
	if err != nil {
		return fmt.Errorf("request stats %s %s: %w", r.AccountID, hour, err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO request_stats
		(account_id, hour_utc, total, succeeded, client_errors, server_errors, rate_limited, latency_histogram)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (account_id, hour_utc) DO UPDATE SET
			total = total + excluded.total,
			succeeded = succeeded + excluded.succeeded,
			client_errors = client_errors + excluded.client_errors,
			server_errors = server_errors + excluded.server_errors,
			rate_limited = rate_limited + excluded.rate_limited,
			latency_histogram = excluded.latency_histogram`,
		r.AccountID, hour, r.Total, r.Succeeded, r.ClientErrors, r.ServerErrors, r.RateLimited, hist)
	if err != nil {
		return fmt.Errorf("upsert %s %s: %w", r.AccountID, hour, err)
	}
	return nil
}

// RequestStats sums the account's stored aggregates of the hours that start
// in [fromHour, toHour).
func (s *Store) RequestStats(ctx context.Context, accountID string, fromHour, toHour time.Time) (locrisk.RequestCounts, error) {
	var rows []struct {
		locrisk.RequestCounts
		Histogram string `db:"latency_histogram"`
	}
	err := s.db.SelectContext(ctx, &rows, `SELECT total, succeeded, client_errors, server_errors, rate_limited, latency_histogram
		FROM request_stats WHERE account_id = ? AND hour_utc >= ? AND hour_utc < ?`,
		accountID, FormatTime(fromHour), FormatTime(toHour))
	if err != nil {
		return locrisk.RequestCounts{}, fmt.Errorf("request stats of %s: %w", accountID, err)
	}
	var sum locrisk.RequestCounts
	for _, r := range rows {
		if r.Latency, err = locrisk.ParseLatencyHistogram([]byte(r.Histogram)); err != nil {
			return locrisk.RequestCounts{}, fmt.Errorf("request stats of %s: %w", accountID, err)
		}
		sum.Add(r.RequestCounts)
	}
	return sum, nil
}
