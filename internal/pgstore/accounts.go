package pgstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/sqlrow"
)

type accountRow struct {
	ID                 string       `db:"id"`
	Name               string       `db:"name"`
	MonthlyQuota       int          `db:"monthly_quota"`
	RateLimitPerMinute int          `db:"rate_limit_per_minute"`
	CreatedUTC         time.Time    `db:"created_utc"`
	DisabledUTC        sql.NullTime `db:"disabled_utc"`
}

const accountColumns = `id, name, monthly_quota, rate_limit_per_minute, created_utc, disabled_utc`

func (r accountRow) account() locrisk.Account {
	return locrisk.Account{ID: r.ID, Name: r.Name, MonthlyQuota: r.MonthlyQuota, RateLimitPerMinute: r.RateLimitPerMinute,
		CreatedUTC: utc(r.CreatedUTC), DisabledUTC: utcPtr(r.DisabledUTC)}
}

// CreateAccount makes an account.
func (s *Store) CreateAccount(ctx context.Context, name string, monthlyQuota, rateLimit int) (locrisk.Account, error) {
	name, err := locrisk.CheckNewAccount(name, monthlyQuota, rateLimit)
	if err != nil {
		return locrisk.Account{}, err
	}
	a := locrisk.Account{ID: ids.New(ids.Account), Name: name, MonthlyQuota: monthlyQuota, RateLimitPerMinute: rateLimit, CreatedUTC: ms(s.now())}
	_, err = s.db.ExecContext(ctx, `INSERT INTO accounts (id, name, monthly_quota, rate_limit_per_minute, created_utc)
		VALUES ($1, $2, $3, $4, $5)`, a.ID, a.Name, a.MonthlyQuota, a.RateLimitPerMinute, a.CreatedUTC)
	if err != nil {
		return locrisk.Account{}, fmt.Errorf("create account: %w", err)
	}
	return a, nil
}

// GetAccount returns the account, or ErrNotFound.
func (s *Store) GetAccount(ctx context.Context, id string) (locrisk.Account, error) {
	return getAccount(ctx, s.db, id)
}

func getAccount(ctx context.Context, q queryer, id string) (locrisk.Account, error) {
	var r accountRow
	err := q.GetContext(ctx, &r, `SELECT `+accountColumns+` FROM accounts WHERE id = $1`, id)
	if err := sqlrow.Got(err, "account "+id); err != nil {
		return locrisk.Account{}, err
	}
	return r.account(), nil
}

// ListAccounts returns every account, oldest first.
func (s *Store) ListAccounts(ctx context.Context) ([]locrisk.Account, error) {
	var rows []accountRow
	if err := s.db.SelectContext(ctx, &rows, `SELECT `+accountColumns+` FROM accounts ORDER BY created_utc, id`); err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	out := make([]locrisk.Account, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.account())
	}
	return out, nil
}

// UpdateAccount applies u and returns the account as it now is.
func (s *Store) UpdateAccount(ctx context.Context, id string, u locrisk.AccountUpdate) (locrisk.Account, error) {
	u, err := u.Normalized()
	if err != nil {
		return locrisk.Account{}, err
	}
	var sets []string
	var args []any
	add := func(col string, v any) {
		args = append(args, v)
		sets = append(sets, fmt.Sprintf("%s = $%d", col, len(args)))
	}
	if u.Name != nil {
		add("name", *u.Name)
	}
	if u.MonthlyQuota != nil {
		add("monthly_quota", *u.MonthlyQuota)
	}
	if u.RateLimit != nil {
		add("rate_limit_per_minute", *u.RateLimit)
	}
	if len(sets) == 0 {
		return s.GetAccount(ctx, id)
	}
	return s.changeAccount(ctx, id, strings.Join(sets, ", "), args...)
}

// SetAccountDisabled disables or enables an account; disabling a disabled
// account keeps the first time.
func (s *Store) SetAccountDisabled(ctx context.Context, id string, disabled bool) (locrisk.Account, error) {
	if !disabled {
		return s.changeAccount(ctx, id, "disabled_utc = NULL")
	}
	return s.changeAccount(ctx, id, "disabled_utc = COALESCE(disabled_utc, $1)", ms(s.now()))
}

// changeAccount runs UPDATE accounts SET <set> for id and returns the row;
// set's placeholders are $1..$n, id is the next.
func (s *Store) changeAccount(ctx context.Context, id, set string, args ...any) (locrisk.Account, error) {
	var r accountRow
	err := s.db.GetContext(ctx, &r, fmt.Sprintf(`UPDATE accounts SET %s WHERE id = $%d RETURNING `+accountColumns, set, len(args)+1),
		append(args, id)...)
	if errors.Is(err, sql.ErrNoRows) {
		return locrisk.Account{}, fmt.Errorf("update account %s: %w", id, locrisk.ErrNotFound)
	}
	if err != nil {
		return locrisk.Account{}, fmt.Errorf("update account %s: %w", id, err)
	}
	return r.account(), nil
}

// CreateKey makes a key for an existing account.
func (s *Store) CreateKey(ctx context.Context, k locrisk.NewKey) (locrisk.APIKey, string, error) {
	secret := ids.NewSecret(ids.KeySecret)
	key, err := k.Key(ids.New(ids.Key), secret, s.now())
	if err != nil {
		return locrisk.APIKey{}, "", err
	}
	rec := key.Record()
	err = s.withTx(ctx, func(tx *sqlx.Tx) error {
		if _, err := getAccount(ctx, tx, k.AccountID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO api_keys
			(id, account_id, name, secret_hash, secret_hint, scopes, scope_version, allowed_cidrs, expires_utc, created_utc)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			rec.ID, rec.AccountID, rec.Name, locrisk.HashKeySecret(secret), rec.SecretHint, rec.Scopes, rec.ScopeVersion,
			rec.AllowedCIDRs, key.ExpiresUTC, key.CreatedUTC)
		return err
	})
	if err != nil {
		return locrisk.APIKey{}, "", fmt.Errorf("create key: %w", err)
	}
	return key, secret, nil
}

// keyRow is an api_keys row: the key as every store holds it, and its
// times as timestamptz.
type keyRow struct {
	locrisk.KeyRecord
	ExpiresUTC  sql.NullTime `db:"expires_utc"`
	RevokedUTC  sql.NullTime `db:"revoked_utc"`
	CreatedUTC  time.Time    `db:"created_utc"`
	LastUsedUTC sql.NullTime `db:"last_used_utc"`
}

const keyColumns = `k.id, k.account_id, k.name, k.secret_hint, k.scopes, k.scope_version, k.allowed_cidrs,
	k.expires_utc, k.revoked_utc, k.created_utc, k.last_used_utc`

func (r keyRow) key() (locrisk.APIKey, error) {
	k, err := r.KeyRecord.Key()
	if err != nil {
		return locrisk.APIKey{}, err
	}
	k.ExpiresUTC, k.RevokedUTC, k.LastUsedUTC = utcPtr(r.ExpiresUTC), utcPtr(r.RevokedUTC), utcPtr(r.LastUsedUTC)
	k.CreatedUTC = utc(r.CreatedUTC)
	return k, nil
}

// ListKeys returns the keys of one account, or of all, oldest first.
func (s *Store) ListKeys(ctx context.Context, accountID string) ([]locrisk.APIKey, error) {
	var rows []keyRow
	var err error
	if accountID == "" {
		err = s.db.SelectContext(ctx, &rows, `SELECT `+keyColumns+` FROM api_keys k ORDER BY k.created_utc, k.id`)
	} else {
		err = s.db.SelectContext(ctx, &rows, `SELECT `+keyColumns+` FROM api_keys k WHERE k.account_id = $1 ORDER BY k.created_utc, k.id`, accountID)
	}
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	return sqlrow.Map(rows, keyRow.key)
}

// RevokeKey revokes a key; revoking twice keeps the first time.
func (s *Store) RevokeKey(ctx context.Context, keyID string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE api_keys SET revoked_utc = COALESCE(revoked_utc, $1) WHERE id = $2`, ms(s.now()), keyID)
	if err != nil {
		return fmt.Errorf("revoke key %s: %w", keyID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("revoke key %s: %w", keyID, err)
	} else if n == 0 {
		return fmt.Errorf("revoke key %s: %w", keyID, locrisk.ErrNotFound)
	}
	return nil
}

// KeyBySecret finds a key and its account by the secret.
func (s *Store) KeyBySecret(ctx context.Context, secret string) (locrisk.APIKey, locrisk.Account, error) {
	var row struct {
		keyRow
		A accountRow `db:"a"`
	}
	err := s.db.GetContext(ctx, &row, `SELECT `+keyColumns+`,
		a.id AS "a.id", a.name AS "a.name", a.monthly_quota AS "a.monthly_quota",
		a.rate_limit_per_minute AS "a.rate_limit_per_minute", a.created_utc AS "a.created_utc",
		a.disabled_utc AS "a.disabled_utc"
		FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.secret_hash = $1`, locrisk.HashKeySecret(secret))
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
	return k, row.A.account(), nil
}

// RecordKeyUse stores last-use times, never moving one back.
func (s *Store) RecordKeyUse(ctx context.Context, uses []locrisk.KeyUse) error {
	if len(uses) == 0 {
		return nil
	}
	err := s.withTx(ctx, func(tx *sqlx.Tx) error {
		for _, u := range uses {
			if _, err := tx.ExecContext(ctx, `UPDATE api_keys SET last_used_utc = $1
				WHERE id = $2 AND (last_used_utc IS NULL OR last_used_utc < $1)`, ms(u.At), u.KeyID); err != nil {
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
