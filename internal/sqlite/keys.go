package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/sqlrow"
)

// CreateKey makes a key for an existing account and returns it with its
// secret, which is not stored and cannot be shown again. An unknown account
// is ErrNotFound; bad scopes, scope version or expiry are ErrInvalid.
func (s *Store) CreateKey(ctx context.Context, k locrisk.NewKey) (locrisk.APIKey, string, error) {
	secret := ids.NewSecret(ids.KeySecret)
	key, err := k.Key(ids.New(ids.Key), secret, s.now())
	if err != nil {
		return locrisk.APIKey{}, "", err
	}
	var expires sql.NullString
	if key.ExpiresUTC != nil {
		expires = sql.NullString{String: FormatTime(*key.ExpiresUTC), Valid: true}
	}
	rec := key.Record()
	err = s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		if _, err := getAccount(ctx, tx, k.AccountID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO api_keys
			(id, account_id, name, secret_hash, secret_hint, scopes, scope_version, allowed_cidrs, expires_utc, created_utc)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			rec.ID, rec.AccountID, rec.Name, locrisk.HashKeySecret(secret), rec.SecretHint, rec.Scopes, rec.ScopeVersion,
			rec.AllowedCIDRs, expires, FormatTime(key.CreatedUTC))
		return err
	})
	if err != nil {
		return locrisk.APIKey{}, "", fmt.Errorf("create key: %w", err)
	}
	return key, secret, nil
}

// keyRow is an api_keys row: the key as every store holds it, and its
// times as TimeLayout text.
type keyRow struct {
	locrisk.KeyRecord
	ExpiresUTC  sql.NullString `db:"expires_utc"`
	RevokedUTC  sql.NullString `db:"revoked_utc"`
	CreatedUTC  string         `db:"created_utc"`
	LastUsedUTC sql.NullString `db:"last_used_utc"`
}

const keyColumns = `k.id, k.account_id, k.name, k.secret_hint, k.scopes, k.scope_version, k.allowed_cidrs, k.expires_utc, k.revoked_utc, k.created_utc, k.last_used_utc`

func (r keyRow) key() (locrisk.APIKey, error) {
	k, err := r.KeyRecord.Key()
	if err != nil {
		return locrisk.APIKey{}, err
	}
	if k.ExpiresUTC, err = parseNullTime(r.ExpiresUTC); err != nil {
		return locrisk.APIKey{}, fmt.Errorf("key %s: %w", r.ID, err)
	}
	if k.RevokedUTC, err = parseNullTime(r.RevokedUTC); err != nil {
		return locrisk.APIKey{}, fmt.Errorf("key %s: %w", r.ID, err)
	}
	if k.CreatedUTC, err = ParseTime(r.CreatedUTC); err != nil {
		return locrisk.APIKey{}, fmt.Errorf("key %s: %w", r.ID, err)
	}
	if k.LastUsedUTC, err = parseNullTime(r.LastUsedUTC); err != nil {
		return locrisk.APIKey{}, fmt.Errorf("key %s: %w", r.ID, err)
	}
	return k, nil
}

// ListKeys returns the keys of one account, or of all accounts when
// accountID is "", oldest first.
func (s *Store) ListKeys(ctx context.Context, accountID string) ([]locrisk.APIKey, error) {
	var rows []keyRow
	var err error
	if accountID == "" {
		err = s.db.SelectContext(ctx, &rows, `SELECT `+keyColumns+` FROM api_keys k ORDER BY k.created_utc, k.id`)
	} else {
		err = s.db.SelectContext(ctx, &rows, `SELECT `+keyColumns+` FROM api_keys k WHERE k.account_id = ? ORDER BY k.created_utc, k.id`, accountID)
	}
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	return sqlrow.Map(rows, keyRow.key)
}

// RevokeKey revokes a key at once (for the server, within its key cache
// lifetime). Revoking a revoked key is a no-op that keeps the first time;
// an unknown id is ErrNotFound.
func (s *Store) RevokeKey(ctx context.Context, keyID string) error {
	now := FormatTime(s.now())
	err := s.withWriteLock(ctx, func() error {
		res, err := s.db.ExecContext(ctx, `UPDATE api_keys SET revoked_utc = COALESCE(revoked_utc, ?) WHERE id = ?`, now, keyID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return locrisk.ErrNotFound
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("revoke key %s: %w", keyID, err)
	}
	return nil
}

// KeyBySecret finds a key and its account by the secret's hash. It returns
// revoked and expired keys, and keys of disabled accounts, too (with their
// times set): deciding whether a key may be used, with the caller's clock
// and address, is the caller's job (APIKey.Usable, Account.Disabled,
// AllowsIP). An unknown secret is ErrNotFound.
func (s *Store) KeyBySecret(ctx context.Context, secret string) (locrisk.APIKey, locrisk.Account, error) {
	var row struct {
		keyRow
		A accountRow `db:"a"`
	}
	err := s.db.GetContext(ctx, &row, `SELECT `+keyColumns+`,
		a.id AS "a.id", a.name AS "a.name", a.monthly_quota AS "a.monthly_quota",
		a.rate_limit_per_minute AS "a.rate_limit_per_minute", a.created_utc AS "a.created_utc",
		a.disabled_utc AS "a.disabled_utc"
		FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.secret_hash = ?`, locrisk.HashKeySecret(secret))
	if errors.Is(err, sql.ErrNoRows) {
		return locrisk.APIKey{}, locrisk.Account{}, locrisk.ErrNotFound
	}
	if err != nil {
		return locrisk.APIKey{}, locrisk.Account{}, fmt.Errorf("key by secret: %w", err)
	}
	k, err := row.keyRow.key()
	if err != nil {
		return locrisk.APIKey{}, locrisk.Account{}, err
	}
	a, err := row.A.account()
	if err != nil {
		return locrisk.APIKey{}, locrisk.Account{}, err
	}
	return k, a, nil
}

// RecordKeyUse stores the last-use times of keys, in one transaction. A
// time earlier than the one stored (another process's, say) does not move
// it back; unknown (purged) keys are skipped. The server calls it with the
// request statistics, at most once a minute per key (docs/operations.md, Accounts and keys),
// so authentication costs no write.
func (s *Store) RecordKeyUse(ctx context.Context, uses []locrisk.KeyUse) error {
	if len(uses) == 0 {
		return nil
	}
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		for _, u := range uses {
			at := FormatTime(truncMs(u.At))
			if _, err := tx.ExecContext(ctx, `UPDATE api_keys SET last_used_utc = ?
				WHERE id = ? AND (last_used_utc IS NULL OR last_used_utc < ?)`, at, u.KeyID, at); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record key use: %w", err)
	}
	return nil
}
