package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// LoadReference returns the risk engine's cached reference saved under key,
// or nil when there is none (risk.ReferenceCache).
func (s *Store) LoadReference(ctx context.Context, key string) ([]byte, error) {
	var body []byte
	err := s.db.GetContext(ctx, &body, `SELECT body FROM reference_cache WHERE cache_key = ?`, key)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read reference cache: %w", err)
	}
	return body, nil
}

// SaveReference keeps body under key and drops every other key: a reference
// for another data version or methodology is never read again.
func (s *Store) SaveReference(ctx context.Context, key string, body []byte) error {
	return s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM reference_cache WHERE cache_key <> ?`, key); err != nil {
			return fmt.Errorf("clear reference cache: %w", err)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO reference_cache (cache_key, body, created_utc) VALUES (?, ?, ?)
			ON CONFLICT (cache_key) DO UPDATE SET body = excluded.body, created_utc = excluded.created_utc`,
			key, body, FormatTime(time.Now()))
		if err != nil {
			return fmt.Errorf("save reference cache: %w", err)
		}
		return nil
	})
}
