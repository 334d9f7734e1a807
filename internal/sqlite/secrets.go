package sqlite

// The webhook signing secrets at rest: sealed with Options.Secrets
// (package secretbox) under the endpoint's id, so that the database file
// alone (a backup, a copy, a dump) does not give them away (docs/operations.md,
// Limits and defaults).

import (
	"context"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk/internal/secretbox"
)

// sealSecret seals an endpoint's signing secret for its row.
func (s *Store) sealSecret(endpointID, secret string) (string, error) {
	if s.secrets == nil {
		return "", ErrNoSecretKey
	}
	return s.secrets.Seal(secret, endpointID), nil
}

// openSecret opens an endpoint's signing secret as its row holds it. A
// value in clear is a row of a database that has never been opened with a
// key; it is returned as it is, since it is the secret the receiver holds.
func (s *Store) openSecret(endpointID, stored string) (string, error) {
	if !secretbox.IsSealed(stored) {
		return stored, nil
	}
	if s.secrets == nil {
		return "", fmt.Errorf("signing secret of %s: %w", endpointID, ErrNoSecretKey)
	}
	plain, err := s.secrets.Open(stored, endpointID)
	if err != nil {
		return "", fmt.Errorf("signing secret of %s: %w: %w", endpointID, ErrSecretKey, err)
	}
	return plain, nil
}

// sealSecrets runs at Open with a key: it seals every signing secret still
// in clear (rows written before secrets were sealed, or while the store
// was opened without a key), in one transaction, and then checks that the
// key opens every sealed one, so that a wrong key stops the server at
// start-up rather than at its first delivery. Running it again finds
// nothing in clear and changes nothing.
func (s *Store) sealSecrets(ctx context.Context) error {
	type row struct {
		ID     string `db:"id"`
		Secret string `db:"signing_secret"`
	}
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var rows []row
		if err := tx.SelectContext(ctx, &rows, `SELECT id, signing_secret FROM webhook_endpoints`); err != nil {
			return fmt.Errorf("read signing secrets: %w", err)
		}
		var bad []string
		for _, r := range rows {
			if secretbox.IsSealed(r.Secret) {
				if _, err := s.openSecret(r.ID, r.Secret); err != nil {
					bad = append(bad, r.ID)
				}
				continue
			}
			v, err := s.sealSecret(r.ID, r.Secret)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET signing_secret = ? WHERE id = ?`, v, r.ID); err != nil {
				return fmt.Errorf("seal signing secret of %s: %w", r.ID, err)
			}
		}
		if len(bad) > 0 {
			return fmt.Errorf("%w (%d of %d endpoints, first %s); give the key they were sealed with",
				ErrSecretKey, len(bad), len(rows), bad[0])
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrSecretKey) {
			return err
		}
		return fmt.Errorf("seal webhook signing secrets: %w", err)
	}
	return nil
}
