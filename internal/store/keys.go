package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk/internal/ids"
)

// Scope names (docs/api.md, Authentication, scopes and check order), in the
// order of its scope table.
const (
	ScopeReportsCreate = "reports:create"
	ScopeReportsRead   = "reports:read"
	ScopeReportsPDF    = "reports:pdf"
	ScopeBulkCreate    = "bulk:create"
	ScopeBulkRead      = "bulk:read"
	ScopeUsageRead     = "usage:read"
	ScopeWebhooksRead  = "webhooks:read"
	ScopeWebhooksWrite = "webhooks:write"
)

// AllScopes returns every scope name in the scope table's order (a fresh
// slice).
func AllScopes() []string {
	return []string{ScopeReportsCreate, ScopeReportsRead, ScopeReportsPDF, ScopeBulkCreate,
		ScopeBulkRead, ScopeUsageRead, ScopeWebhooksRead, ScopeWebhooksWrite}
}

// ValidScope reports whether name is one of the eight scopes.
func ValidScope(name string) bool { return slices.Contains(AllScopes(), name) }

// Scope versions: keys made before usage:read existed are version 1, and
// their reports:read also grants the usage endpoints (docs/api.md,
// Authentication, scopes and check order).
const (
	ScopeVersionLegacy  = 1
	ScopeVersionCurrent = 2
)

// APIKey is a key as stored: never the secret, only a hint for listings.
type APIKey struct {
	ID           string
	AccountID    string
	Name         string // the operator's label; "" when none was given
	SecretHint   string // "lrk_" + the first 4 characters of the random part
	Scopes       []string
	ScopeVersion int
	AllowedCIDRs []netip.Prefix // empty: any address
	ExpiresUTC   *time.Time
	RevokedUTC   *time.Time
	CreatedUTC   time.Time
	// LastUsedUTC is when the key last authenticated a request, to the
	// minute (RecordKeyUse); nil when it has not been used.
	LastUsedUTC *time.Time
}

// HasScope reports whether the key holds scope.
func (k APIKey) HasScope(scope string) bool { return slices.Contains(k.Scopes, scope) }

// Usable reports whether the key is neither revoked nor expired at now.
func (k APIKey) Usable(now time.Time) bool {
	if k.RevokedUTC != nil {
		return false
	}
	return k.ExpiresUTC == nil || now.Before(*k.ExpiresUTC)
}

// AllowsIP reports whether addr is inside the key's allowlist (an empty list
// allows every address). IPv4-mapped IPv6 addresses are compared as IPv4.
func (k APIKey) AllowsIP(addr netip.Addr) bool {
	if len(k.AllowedCIDRs) == 0 {
		return true
	}
	addr = addr.Unmap()
	for _, p := range k.AllowedCIDRs {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// NewKey describes a key to create.
type NewKey struct {
	AccountID    string
	Name         string   // optional label (CheckKeyName)
	Scopes       []string // at least one; each a known scope name
	ScopeVersion int      // 0 means ScopeVersionCurrent
	AllowedCIDRs []netip.Prefix
	ExpiresIn    time.Duration // 0: never expires
}

// MaxKeyNameLen is the longest key label, in characters (Unicode code
// points): the rule of the API's other names (docs/api.md, "Create an
// endpoint").
const MaxKeyNameLen = 100

// CheckKeyName applies the names' free-text rule to a key label: at most
// MaxKeyNameLen characters and no control characters (a label is printed in
// listings and logs, where a line break or a terminal escape would forge
// lines). "" is allowed: a label is optional.
func CheckKeyName(name string) error {
	if n := utf8.RuneCountInString(name); n > MaxKeyNameLen {
		return fmt.Errorf("%w: key name is %d characters long; at most %d are allowed", ErrInvalid, n, MaxKeyNameLen)
	}
	if !utf8.ValidString(name) || strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return fmt.Errorf("%w: key name holds control characters or invalid UTF-8", ErrInvalid)
	}
	return nil
}

// ParseCIDRs parses a list of networks separated by commas and/or spaces. A
// bare address means that single address (/32 or /128). Host bits are
// cleared ("10.1.2.3/8" is 10.0.0.0/8). An empty string gives an empty list.
func ParseCIDRs(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		p, err := parseCIDR(f)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func parseCIDR(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%w: bad CIDR %q: %v", ErrInvalid, s, err)
		}
		if p.Addr().Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%w: bad CIDR %q: zones are not allowed", ErrInvalid, s)
		}
		return unmapPrefix(p).Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%w: bad IP address %q: %v", ErrInvalid, s, err)
	}
	if a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%w: bad IP address %q: zones are not allowed", ErrInvalid, s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// unmapPrefix turns ::ffff:10.0.0.0/104 into 10.0.0.0/8, because request
// addresses are unmapped before the comparison.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	a := p.Addr()
	if !a.Is4In6() {
		return p
	}
	bits := p.Bits() - 96
	if bits < 0 {
		bits = 0
	}
	return netip.PrefixFrom(a.Unmap(), bits)
}

// HashSecret is the stored form of a key secret: hex SHA-256. A fast hash is
// right here: the secret has 238 random bits, so there is nothing to brute
// force, and authentication runs on every request.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// normalizeScopes checks the names and returns them deduplicated in the
// scope table's order, so stored keys compare and list predictably.
func normalizeScopes(in []string) ([]string, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("%w: a key needs at least one scope (known: %s)", ErrInvalid, strings.Join(AllScopes(), ", "))
	}
	for _, sc := range in {
		if !ValidScope(sc) {
			return nil, fmt.Errorf("%w: unknown scope %q (known: %s)", ErrInvalid, sc, strings.Join(AllScopes(), ", "))
		}
	}
	var out []string
	for _, sc := range AllScopes() {
		if slices.Contains(in, sc) {
			out = append(out, sc)
		}
	}
	return out, nil
}

// CreateKey makes a key for an existing account and returns it with its
// secret, which is not stored and cannot be shown again. An unknown account
// is ErrNotFound; bad scopes, scope version or expiry are ErrInvalid.
func (s *Store) CreateKey(ctx context.Context, k NewKey) (APIKey, string, error) {
	scopes, err := normalizeScopes(k.Scopes)
	if err != nil {
		return APIKey{}, "", err
	}
	if err := CheckKeyName(k.Name); err != nil {
		return APIKey{}, "", err
	}
	version := k.ScopeVersion
	if version == 0 {
		version = ScopeVersionCurrent
	}
	if version != ScopeVersionLegacy && version != ScopeVersionCurrent {
		return APIKey{}, "", fmt.Errorf("%w: scope version %d (want %d or %d)", ErrInvalid, k.ScopeVersion, ScopeVersionLegacy, ScopeVersionCurrent)
	}
	if k.ExpiresIn < 0 {
		return APIKey{}, "", fmt.Errorf("%w: negative expiry %s", ErrInvalid, k.ExpiresIn)
	}
	cidrs := make([]netip.Prefix, 0, len(k.AllowedCIDRs))
	for _, p := range k.AllowedCIDRs {
		if !p.IsValid() {
			return APIKey{}, "", fmt.Errorf("%w: invalid CIDR in allowlist", ErrInvalid)
		}
		p = unmapPrefix(p).Masked()
		if !slices.Contains(cidrs, p) {
			cidrs = append(cidrs, p)
		}
	}

	now := truncMs(s.now())
	secret := ids.NewSecret(ids.KeySecret)
	key := APIKey{
		ID:           ids.New(ids.Key),
		AccountID:    k.AccountID,
		Name:         k.Name,
		SecretHint:   secret[:len(ids.KeySecret)+4],
		Scopes:       scopes,
		ScopeVersion: version,
		AllowedCIDRs: cidrs,
		CreatedUTC:   now,
	}
	var expires sql.NullString
	if k.ExpiresIn > 0 {
		t := truncMs(now.Add(k.ExpiresIn))
		key.ExpiresUTC = &t
		expires = sql.NullString{String: FormatTime(t), Valid: true}
	}
	err = s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
		if _, err := getAccount(ctx, tx, k.AccountID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO api_keys
			(id, account_id, name, secret_hash, secret_hint, scopes, scope_version, allowed_cidrs, expires_utc, created_utc)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			key.ID, key.AccountID, key.Name, HashSecret(secret), key.SecretHint, strings.Join(scopes, " "), version,
			formatCIDRs(cidrs), expires, FormatTime(now))
		return err
	})
	if err != nil {
		return APIKey{}, "", fmt.Errorf("create key: %w", err)
	}
	return key, secret, nil
}

func formatCIDRs(ps []netip.Prefix) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.String()
	}
	return strings.Join(parts, " ")
}

type keyRow struct {
	ID           string         `db:"id"`
	AccountID    string         `db:"account_id"`
	Name         string         `db:"name"`
	SecretHint   string         `db:"secret_hint"`
	Scopes       string         `db:"scopes"`
	ScopeVersion int            `db:"scope_version"`
	AllowedCIDRs string         `db:"allowed_cidrs"`
	ExpiresUTC   sql.NullString `db:"expires_utc"`
	RevokedUTC   sql.NullString `db:"revoked_utc"`
	CreatedUTC   string         `db:"created_utc"`
	LastUsedUTC  sql.NullString `db:"last_used_utc"`
}

const keyColumns = `k.id, k.account_id, k.name, k.secret_hint, k.scopes, k.scope_version, k.allowed_cidrs, k.expires_utc, k.revoked_utc, k.created_utc, k.last_used_utc`

func (r keyRow) key() (APIKey, error) {
	k := APIKey{ID: r.ID, AccountID: r.AccountID, Name: r.Name, SecretHint: r.SecretHint, Scopes: strings.Fields(r.Scopes), ScopeVersion: r.ScopeVersion}
	var err error
	if k.AllowedCIDRs, err = ParseCIDRs(r.AllowedCIDRs); err != nil {
		return APIKey{}, fmt.Errorf("key %s: stored allowlist: %w", r.ID, err)
	}
	if k.ExpiresUTC, err = parseNullTime(r.ExpiresUTC); err != nil {
		return APIKey{}, fmt.Errorf("key %s: %w", r.ID, err)
	}
	if k.RevokedUTC, err = parseNullTime(r.RevokedUTC); err != nil {
		return APIKey{}, fmt.Errorf("key %s: %w", r.ID, err)
	}
	if k.CreatedUTC, err = ParseTime(r.CreatedUTC); err != nil {
		return APIKey{}, fmt.Errorf("key %s: %w", r.ID, err)
	}
	if k.LastUsedUTC, err = parseNullTime(r.LastUsedUTC); err != nil {
		return APIKey{}, fmt.Errorf("key %s: %w", r.ID, err)
	}
	return k, nil
}

// ListKeys returns the keys of one account, or of all accounts when
// accountID is "", oldest first.
func (s *Store) ListKeys(ctx context.Context, accountID string) ([]APIKey, error) {
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
	out := make([]APIKey, 0, len(rows))
	for _, r := range rows {
		k, err := r.key()
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
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
			return ErrNotFound
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
func (s *Store) KeyBySecret(ctx context.Context, secret string) (APIKey, Account, error) {
	var row struct {
		keyRow
		A accountRow `db:"a"`
	}
	err := s.db.GetContext(ctx, &row, `SELECT `+keyColumns+`,
		a.id AS "a.id", a.name AS "a.name", a.monthly_quota AS "a.monthly_quota",
		a.rate_limit_per_minute AS "a.rate_limit_per_minute", a.created_utc AS "a.created_utc",
		a.disabled_utc AS "a.disabled_utc"
		FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.secret_hash = ?`, HashSecret(secret))
	if errors.Is(err, sql.ErrNoRows) {
		return APIKey{}, Account{}, ErrNotFound
	}
	if err != nil {
		return APIKey{}, Account{}, fmt.Errorf("key by secret: %w", err)
	}
	k, err := row.keyRow.key()
	if err != nil {
		return APIKey{}, Account{}, err
	}
	a, err := row.A.account()
	if err != nil {
		return APIKey{}, Account{}, err
	}
	return k, a, nil
}

// KeyUse is one key's use as the server records it.
type KeyUse struct {
	KeyID string
	At    time.Time
}

// RecordKeyUse stores the last-use times of keys, in one transaction. A
// time earlier than the one stored (another process's, say) does not move
// it back; unknown (purged) keys are skipped. The server calls it with the
// request statistics, at most once a minute per key (docs/operations.md, Accounts and keys),
// so authentication costs no write.
func (s *Store) RecordKeyUse(ctx context.Context, uses []KeyUse) error {
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
