package sqlite

// The keys reports are signed with (migration 014; docs/verification.md).
// The private half is sealed like the webhook signing secrets (secrets.go)
// under the key's id, and erased when the key is retired.

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/sqlrow"
)

type signingKeyRow struct {
	ID         string         `db:"id"`
	PublicKey  []byte         `db:"public_key"`
	PrivateKey sql.NullString `db:"private_key"`
	CreatedUTC string         `db:"created_utc"`
	RetiredUTC sql.NullString `db:"retired_utc"`
}

const signingKeyColumns = `id, public_key, private_key, created_utc, retired_utc`

// key turns the row into a SigningKey, opening the private half when
// withPrivate.
func (s *Store) signingKey(r signingKeyRow, withPrivate bool) (locrisk.SigningKey, error) {
	k, err := locrisk.StoredSigningKey(r.ID, r.PublicKey)
	if err != nil {
		return locrisk.SigningKey{}, err
	}
	if k.CreatedUTC, err = ParseTime(r.CreatedUTC); err != nil {
		return locrisk.SigningKey{}, fmt.Errorf("signing key %s: %w", r.ID, err)
	}
	if r.RetiredUTC.Valid {
		if k.RetiredUTC, err = ParseTime(r.RetiredUTC.String); err != nil {
			return locrisk.SigningKey{}, fmt.Errorf("signing key %s: %w", r.ID, err)
		}
	}
	if withPrivate && r.PrivateKey.Valid {
		seedText, err := s.openSecret(r.ID, r.PrivateKey.String)
		if err != nil {
			return locrisk.SigningKey{}, err
		}
		if err := k.SetSeedText(seedText); err != nil {
			return locrisk.SigningKey{}, err
		}
	}
	return k, nil
}

// insertSigningKey stores k as the current key, its private half sealed.
func (s *Store) insertSigningKey(ctx context.Context, tx *sqlx.Tx, k locrisk.SigningKey) error {
	if err := k.ValidateNew(); err != nil {
		return err
	}
	sealed, err := s.sealSecret(k.ID, k.SeedText())
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO signing_keys (id, public_key, private_key, created_utc) VALUES (?, ?, ?, ?)`,
		k.ID, []byte(k.PrivateKey.Public().(ed25519.PublicKey)), sealed, FormatTime(k.CreatedUTC))
	if err != nil {
		return fmt.Errorf("store signing key %s: %w", k.ID, err)
	}
	return nil
}

// EnsureSigningKey stores k as the current key when there is none, and
// returns the current key.
func (s *Store) EnsureSigningKey(ctx context.Context, k locrisk.SigningKey) (locrisk.SigningKey, bool, error) {
	created := false
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		var n int
		if err := tx.GetContext(ctx, &n, `SELECT COUNT(*) FROM signing_keys WHERE retired_utc IS NULL`); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		created = true
		return s.insertSigningKey(ctx, tx, k)
	})
	if err != nil {
		return locrisk.SigningKey{}, false, fmt.Errorf("ensure signing key: %w", err)
	}
	cur, err := s.CurrentSigningKey(ctx)
	return cur, created, err
}

// RotateSigningKey retires the current key at k.CreatedUTC, erasing its
// private half, and stores k as the current key.
func (s *Store) RotateSigningKey(ctx context.Context, k locrisk.SigningKey) error {
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE signing_keys SET retired_utc = ?, private_key = NULL WHERE retired_utc IS NULL`,
			FormatTime(k.CreatedUTC)); err != nil {
			return err
		}
		return s.insertSigningKey(ctx, tx, k)
	})
	if err != nil {
		return fmt.Errorf("rotate signing key: %w", err)
	}
	return nil
}

// CurrentSigningKey returns the current key with its private half.
func (s *Store) CurrentSigningKey(ctx context.Context) (locrisk.SigningKey, error) {
	var r signingKeyRow
	err := s.db.GetContext(ctx, &r, `SELECT `+signingKeyColumns+` FROM signing_keys WHERE retired_utc IS NULL`)
	if err := sqlrow.Got(err, "current signing key"); err != nil {
		return locrisk.SigningKey{}, err
	}
	return s.signingKey(r, true)
}

// ListSigningKeys returns every key, newest first, public halves only.
func (s *Store) ListSigningKeys(ctx context.Context) ([]locrisk.SigningKey, error) {
	var rows []signingKeyRow
	if err := s.db.SelectContext(ctx, &rows, `SELECT `+signingKeyColumns+` FROM signing_keys ORDER BY created_utc DESC, id DESC`); err != nil {
		return nil, fmt.Errorf("list signing keys: %w", err)
	}
	return sqlrow.Map(rows, func(r signingKeyRow) (locrisk.SigningKey, error) { return s.signingKey(r, false) })
}
