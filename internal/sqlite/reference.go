package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/locrisk/locrisk"
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
// for another data version or methodology is never read again. A body the
// disk has no room for is not tried: its pages go through the write-ahead
// log first, so it needs about twice its size, and a write that fills the
// disk halfway would leave none for the requests' writes. The error then
// says how much room it needs (the engine logs it and goes on with the
// reference it built; the next start builds it again), and the store
// stays not ready (ProbeWrite) until that much room is free: a disk that
// small fills with the next writes.
func (s *Store) SaveReference(ctx context.Context, key string, body []byte) error {
	need := 2*uint64(len(body)) + probeRoom
	if free, ok := freeBytes(s.path); ok && free < need {
		s.room.need.Store(need)
		return fmt.Errorf("%w: the reference needs about %d MB on the disk of %s (its %d MB and as much again in the write-ahead log), and %d MB are left; "+
			"it is not saved, and each start builds it again (about 6 s) until space is freed",
			locrisk.ErrStorageFull, need>>20, filepath.Dir(s.path), len(body)>>20, free>>20)
	}
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
