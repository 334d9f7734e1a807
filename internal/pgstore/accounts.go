package pgstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
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
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return locrisk.Account{}, fmt.Errorf("%w: account name is empty", locrisk.ErrInvalid)
	case monthlyQuota < 0:
		return locrisk.Account{}, fmt.Errorf("%w: monthly quota %d is negative", locrisk.ErrInvalid, monthlyQuota)
	case rateLimit <= 0:
		return locrisk.Account{}, fmt.Errorf("%w: rate limit %d must be positive", locrisk.ErrInvalid, rateLimit)
	}
	a := locrisk.Account{ID: ids.New(ids.Account), Name: name, MonthlyQuota: monthlyQuota, RateLimitPerMinute: rateLimit, CreatedUTC: ms(s.now())}
	_, err := s.db.ExecContext(ctx, `INSERT INTO accounts (id, name, monthly_quota, rate_limit_per_minute, created_utc)
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
	if errors.Is(err, sql.ErrNoRows) {
		return locrisk.Account{}, fmt.Errorf("account %s: %w", id, locrisk.ErrNotFound)
	}
	if err != nil {
		return locrisk.Account{}, fmt.Errorf("get account %s: %w", id, err)
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
	var sets []string
	var args []any
	add := func(col string, v any) {
		args = append(args, v)
		sets = append(sets, fmt.Sprintf("%s = $%d", col, len(args)))
	}
	if u.Name != nil {
		name := strings.TrimSpace(*u.Name)
		if name == "" {
			return locrisk.Account{}, fmt.Errorf("%w: account name is empty", locrisk.ErrInvalid)
		}
		add("name", name)
	}
	if u.MonthlyQuota != nil {
		if *u.MonthlyQuota < 0 {
			return locrisk.Account{}, fmt.Errorf("%w: monthly quota %d is negative", locrisk.ErrInvalid, *u.MonthlyQuota)
		}
		add("monthly_quota", *u.MonthlyQuota)
	}
	if u.RateLimit != nil {
		if *u.RateLimit <= 0 {
			return locrisk.Account{}, fmt.Errorf("%w: rate limit %d must be positive", locrisk.ErrInvalid, *u.RateLimit)
		}
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

// hashSecret is how a key's secret is stored: its SHA-256, as the SQLite
// store keeps it, so a secret means the same key in either store.
func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// CreateKey makes a key for an existing account.
func (s *Store) CreateKey(ctx context.Context, k locrisk.NewKey) (locrisk.APIKey, string, error) {
	scopes, version, cidrs, err := k.Normalized()
	if err != nil {
		return locrisk.APIKey{}, "", err
	}
	now := ms(s.now())
	secret := ids.NewSecret(ids.KeySecret)
	key := locrisk.APIKey{ID: ids.New(ids.Key), AccountID: k.AccountID, Name: k.Name, SecretHint: secret[:len(ids.KeySecret)+4],
		Scopes: scopes, ScopeVersion: version, AllowedCIDRs: cidrs, CreatedUTC: now}
	var expires sql.NullTime
	if k.ExpiresIn > 0 {
		t := ms(now.Add(k.ExpiresIn))
		key.ExpiresUTC, expires = &t, sql.NullTime{Time: t, Valid: true}
	}
	parts := make([]string, len(cidrs))
	for i, p := range cidrs {
		parts[i] = p.String()
	}
	err = s.withTx(ctx, func(tx *sqlx.Tx) error {
		if _, err := getAccount(ctx, tx, k.AccountID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO api_keys
			(id, account_id, name, secret_hash, secret_hint, scopes, scope_version, allowed_cidrs, expires_utc, created_utc)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			key.ID, key.AccountID, key.Name, hashSecret(secret), key.SecretHint, strings.Join(scopes, " "), version,
			strings.Join(parts, " "), expires, now)
		return err
	})
	if err != nil {
		return locrisk.APIKey{}, "", fmt.Errorf("create key: %w", err)
	}
	return key, secret, nil
}

type keyRow struct {
	ID           string       `db:"id"`
	AccountID    string       `db:"account_id"`
	Name         string       `db:"name"`
	SecretHint   string       `db:"secret_hint"`
	Scopes       string       `db:"scopes"`
	ScopeVersion int          `db:"scope_version"`
	AllowedCIDRs string       `db:"allowed_cidrs"`
	ExpiresUTC   sql.NullTime `db:"expires_utc"`
	RevokedUTC   sql.NullTime `db:"revoked_utc"`
	CreatedUTC   time.Time    `db:"created_utc"`
	LastUsedUTC  sql.NullTime `db:"last_used_utc"`
}

const keyColumns = `k.id, k.account_id, k.name, k.secret_hint, k.scopes, k.scope_version, k.allowed_cidrs,
	k.expires_utc, k.revoked_utc, k.created_utc, k.last_used_utc`

func (r keyRow) key() (locrisk.APIKey, error) {
	cidrs, err := locrisk.ParseCIDRs(r.AllowedCIDRs)
	if err != nil {
		return locrisk.APIKey{}, fmt.Errorf("key %s: stored allowlist: %w", r.ID, err)
	}
	return locrisk.APIKey{ID: r.ID, AccountID: r.AccountID, Name: r.Name, SecretHint: r.SecretHint, Scopes: strings.Fields(r.Scopes),
		ScopeVersion: r.ScopeVersion, AllowedCIDRs: cidrs, ExpiresUTC: utcPtr(r.ExpiresUTC), RevokedUTC: utcPtr(r.RevokedUTC),
		CreatedUTC: utc(r.CreatedUTC), LastUsedUTC: utcPtr(r.LastUsedUTC)}, nil
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
	out := make([]locrisk.APIKey, 0, len(rows))
	for _, r := range rows {
		k, err := r.key()
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
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
		FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.secret_hash = $1`, hashSecret(secret))
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
