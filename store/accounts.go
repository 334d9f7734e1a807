package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"locrisk/ids"
)

// Account owns keys, jobs and reports; quota and rate limit are per account.
type Account struct {
	ID                 string
	Name               string
	MonthlyQuota       int // report jobs per calendar month (UTC)
	RateLimitPerMinute int
	CreatedUTC         time.Time
}

// Defaults from docs/api.md (Command line).
const (
	DefaultMonthlyQuota = 1000
	DefaultRateLimit    = 600
)

type accountRow struct {
	ID                 string `db:"id"`
	Name               string `db:"name"`
	MonthlyQuota       int    `db:"monthly_quota"`
	RateLimitPerMinute int    `db:"rate_limit_per_minute"`
	CreatedUTC         string `db:"created_utc"`
}

func (r accountRow) account() (Account, error) {
	t, err := ParseTime(r.CreatedUTC)
	if err != nil {
		return Account{}, fmt.Errorf("account %s: %w", r.ID, err)
	}
	return Account{ID: r.ID, Name: r.Name, MonthlyQuota: r.MonthlyQuota, RateLimitPerMinute: r.RateLimitPerMinute, CreatedUTC: t}, nil
}

// CreateAccount makes an account. monthlyQuota may be 0 (an account that
// cannot create jobs); rateLimit must be positive.
func (s *Store) CreateAccount(ctx context.Context, name string, monthlyQuota, rateLimit int) (Account, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return Account{}, fmt.Errorf("%w: account name is empty", ErrInvalid)
	case monthlyQuota < 0:
		return Account{}, fmt.Errorf("%w: monthly quota %d is negative", ErrInvalid, monthlyQuota)
	case rateLimit <= 0:
		return Account{}, fmt.Errorf("%w: rate limit %d must be positive", ErrInvalid, rateLimit)
	}
	a := Account{ID: ids.New(ids.Account), Name: name, MonthlyQuota: monthlyQuota, RateLimitPerMinute: rateLimit, CreatedUTC: truncMs(s.now())}
	err := s.withWriteLock(ctx, func() error {
		_, err := s.db.ExecContext(ctx,
			`INSERT INTO accounts (id, name, monthly_quota, rate_limit_per_minute, created_utc) VALUES (?, ?, ?, ?, ?)`,
			a.ID, a.Name, a.MonthlyQuota, a.RateLimitPerMinute, FormatTime(a.CreatedUTC))
		return err
	})
	if err != nil {
		return Account{}, fmt.Errorf("create account: %w", err)
	}
	return a, nil
}

// GetAccount returns the account, or ErrNotFound.
func (s *Store) GetAccount(ctx context.Context, id string) (Account, error) {
	return getAccount(ctx, s.db, id)
}

func getAccount(ctx context.Context, q queryer, id string) (Account, error) {
	var r accountRow
	err := q.GetContext(ctx, &r, `SELECT id, name, monthly_quota, rate_limit_per_minute, created_utc FROM accounts WHERE id = ?`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return Account{}, fmt.Errorf("account %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Account{}, fmt.Errorf("get account %s: %w", id, err)
	}
	return r.account()
}

// queryer is what both *sqlx.DB and *sqlx.Tx offer, so read helpers work
// inside and outside a transaction.
type queryer interface {
	GetContext(ctx context.Context, dest any, query string, args ...any) error
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
}
