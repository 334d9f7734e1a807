package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/sqlrow"
)

type accountRow struct {
	ID                 string         `db:"id"`
	Name               string         `db:"name"`
	MonthlyQuota       int            `db:"monthly_quota"`
	RateLimitPerMinute int            `db:"rate_limit_per_minute"`
	CreatedUTC         string         `db:"created_utc"`
	DisabledUTC        sql.NullString `db:"disabled_utc"`
}

const accountColumns = `id, name, monthly_quota, rate_limit_per_minute, created_utc, disabled_utc`

func (r accountRow) account() (locrisk.Account, error) {
	t, err := ParseTime(r.CreatedUTC)
	if err != nil {
		return locrisk.Account{}, fmt.Errorf("account %s: %w", r.ID, err)
	}
	disabled, err := parseNullTime(r.DisabledUTC)
	if err != nil {
		return locrisk.Account{}, fmt.Errorf("account %s: %w", r.ID, err)
	}
	return locrisk.Account{ID: r.ID, Name: r.Name, MonthlyQuota: r.MonthlyQuota, RateLimitPerMinute: r.RateLimitPerMinute,
		CreatedUTC: t, DisabledUTC: disabled}, nil
}

// CreateAccount makes an account. monthlyQuota may be 0 (an account that
// cannot create jobs); rateLimit must be positive.
func (s *Store) CreateAccount(ctx context.Context, name string, monthlyQuota, rateLimit int) (locrisk.Account, error) {
	name, err := locrisk.CheckNewAccount(name, monthlyQuota, rateLimit)
	if err != nil {
		return locrisk.Account{}, err
	}
	a := locrisk.Account{ID: ids.New(ids.Account), Name: name, MonthlyQuota: monthlyQuota, RateLimitPerMinute: rateLimit, CreatedUTC: truncMs(s.now())}
	err = s.withWriteLock(ctx, func() error {
		_, err := s.db.ExecContext(ctx,
			`INSERT INTO accounts (id, name, monthly_quota, rate_limit_per_minute, created_utc) VALUES (?, ?, ?, ?, ?)`,
			a.ID, a.Name, a.MonthlyQuota, a.RateLimitPerMinute, FormatTime(a.CreatedUTC))
		return err
	})
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
	err := q.GetContext(ctx, &r, `SELECT `+accountColumns+` FROM accounts WHERE id = ?`, id)
	if err := sqlrow.Got(err, "account "+id); err != nil {
		return locrisk.Account{}, err
	}
	return r.account()
}

// ListAccounts returns every account, oldest first.
func (s *Store) ListAccounts(ctx context.Context) ([]locrisk.Account, error) {
	var rows []accountRow
	if err := s.db.SelectContext(ctx, &rows, `SELECT `+accountColumns+` FROM accounts ORDER BY created_utc, id`); err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	return sqlrow.Map(rows, accountRow.account)
}

// UpdateAccount applies u and returns the account as it now is. The quota
// is read from the database by every job creation, so a change applies to
// the next one; a running server sees a new name or rate limit within its
// key cache lifetime (one second). An unknown id is ErrNotFound; values out
// of range are ErrInvalid.
func (s *Store) UpdateAccount(ctx context.Context, id string, u locrisk.AccountUpdate) (locrisk.Account, error) {
	u, err := u.Normalized()
	if err != nil {
		return locrisk.Account{}, err
	}
	var sets []string
	var args []any
	if u.Name != nil {
		sets, args = append(sets, "name = ?"), append(args, *u.Name)
	}
	if u.MonthlyQuota != nil {
		sets, args = append(sets, "monthly_quota = ?"), append(args, *u.MonthlyQuota)
	}
	if u.RateLimit != nil {
		sets, args = append(sets, "rate_limit_per_minute = ?"), append(args, *u.RateLimit)
	}
	if len(sets) == 0 {
		return s.GetAccount(ctx, id)
	}
	return s.changeAccount(ctx, id, strings.Join(sets, ", "), args...)
}

// SetAccountDisabled disables (disabled true) or enables an account and
// returns it. Disabling a disabled account keeps the first time. A running
// server refuses the account's keys within its key cache lifetime (one
// second), with the same 401 as a revoked key. An unknown id is ErrNotFound.
func (s *Store) SetAccountDisabled(ctx context.Context, id string, disabled bool) (locrisk.Account, error) {
	if !disabled {
		return s.changeAccount(ctx, id, "disabled_utc = NULL")
	}
	return s.changeAccount(ctx, id, "disabled_utc = COALESCE(disabled_utc, ?)", FormatTime(truncMs(s.now())))
}

// changeAccount runs UPDATE accounts SET <set> for id and reads the row back
// in the same transaction.
func (s *Store) changeAccount(ctx context.Context, id, set string, args ...any) (locrisk.Account, error) {
	var a locrisk.Account
	err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE accounts SET `+set+` WHERE id = ?`, append(args, id)...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return fmt.Errorf("account %s: %w", id, locrisk.ErrNotFound)
		}
		a, err = getAccount(ctx, tx, id)
		return err
	})
	if err != nil {
		return locrisk.Account{}, fmt.Errorf("update account %s: %w", id, err)
	}
	return a, nil
}
