package pgstore

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/sqlrow"
)

type signingKeyRow struct {
	ID         string         `db:"id"`
	PublicKey  []byte         `db:"public_key"`
	PrivateKey sql.NullString `db:"private_key"`
	CreatedUTC time.Time      `db:"created_utc"`
	RetiredUTC sql.NullTime   `db:"retired_utc"`
}

const signingKeyColumns = `id, public_key, private_key, created_utc, retired_utc`

// signingKey turns the row into a key, opening the private half when
// withPrivate (sealed like the SQLite store seals it, under the key's id).
func (s *Store) signingKey(r signingKeyRow, withPrivate bool) (locrisk.SigningKey, error) {
	k, err := locrisk.StoredSigningKey(r.ID, r.PublicKey)
	if err != nil {
		return locrisk.SigningKey{}, err
	}
	k.CreatedUTC = utc(r.CreatedUTC)
	if r.RetiredUTC.Valid {
		k.RetiredUTC = utc(r.RetiredUTC.Time)
	}
	if withPrivate && r.PrivateKey.Valid {
		if s.secrets == nil {
			return locrisk.SigningKey{}, fmt.Errorf("signing key %s: no secret key to open it with", r.ID)
		}
		seedText, err := s.secrets.Open(r.PrivateKey.String, r.ID)
		if err != nil {
			return locrisk.SigningKey{}, fmt.Errorf("signing key %s: the secret key does not open it: %w", r.ID, err)
		}
		if err := k.SetSeedText(seedText); err != nil {
			return locrisk.SigningKey{}, err
		}
	}
	return k, nil
}

func (s *Store) insertSigningKey(ctx context.Context, tx *sqlx.Tx, k locrisk.SigningKey) error {
	if err := k.ValidateNew(); err != nil {
		return err
	}
	if s.secrets == nil {
		return errors.New("no secret key to seal the signing key with")
	}
	sealed := s.secrets.Seal(k.SeedText(), k.ID)
	_, err := tx.ExecContext(ctx, `INSERT INTO signing_keys (id, public_key, private_key, created_utc) VALUES ($1, $2, $3, $4)`,
		k.ID, []byte(k.PrivateKey.Public().(ed25519.PublicKey)), sealed, ms(k.CreatedUTC))
	if err != nil {
		return fmt.Errorf("store signing key %s: %w", k.ID, err)
	}
	return nil
}

// EnsureSigningKey stores k as the current key when there is none. Two
// nodes ensuring at once make one key: the unique index on the current
// key refuses the second insert, whose node then reads the first's.
func (s *Store) EnsureSigningKey(ctx context.Context, k locrisk.SigningKey) (locrisk.SigningKey, bool, error) {
	created := false
	err := s.withTx(ctx, func(tx *sqlx.Tx) error {
		created = false
		// The table lock orders concurrent ensures, so the second sees the
		// first's key rather than failing on the unique index.
		if _, err := tx.ExecContext(ctx, `LOCK TABLE signing_keys IN SHARE ROW EXCLUSIVE MODE`); err != nil {
			return err
		}
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

// RotateSigningKey retires the current key at k.CreatedUTC and stores k.
func (s *Store) RotateSigningKey(ctx context.Context, k locrisk.SigningKey) error {
	err := s.withTx(ctx, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `LOCK TABLE signing_keys IN SHARE ROW EXCLUSIVE MODE`); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE signing_keys SET retired_utc = $1, private_key = NULL WHERE retired_utc IS NULL`,
			ms(k.CreatedUTC)); err != nil {
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
