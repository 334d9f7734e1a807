package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAccountManagement(t *testing.T) {
	ctx := context.Background()
	now := t0
	s := newStore(t, Options{Now: func() time.Time { return now }})
	a := newAccount(t, s, 10)
	now = now.Add(time.Second)
	b, err := s.CreateAccount(ctx, "Second", 5, 60)
	if err != nil {
		t.Fatal(err)
	}

	list, err := s.ListAccounts(ctx)
	if err != nil || len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID || list[0].Disabled() {
		t.Fatalf("ListAccounts = %+v, %v; want a then b, enabled", list, err)
	}

	ptr := func(n int) *int { return &n }
	name := "  Renamed  "
	up, err := s.UpdateAccount(ctx, a.ID, AccountUpdate{Name: &name, MonthlyQuota: ptr(0), RateLimit: ptr(7)})
	if err != nil || up.Name != "Renamed" || up.MonthlyQuota != 0 || up.RateLimitPerMinute != 7 || up.CreatedUTC != a.CreatedUTC {
		t.Fatalf("UpdateAccount = %+v, %v", up, err)
	}
	// Fields left nil stay as they are; nothing at all is a read.
	if up, err = s.UpdateAccount(ctx, a.ID, AccountUpdate{RateLimit: ptr(9)}); err != nil || up.Name != "Renamed" || up.RateLimitPerMinute != 9 {
		t.Errorf("partial update = %+v, %v", up, err)
	}
	if up, err = s.UpdateAccount(ctx, a.ID, AccountUpdate{}); err != nil || up.RateLimitPerMinute != 9 {
		t.Errorf("empty update = %+v, %v", up, err)
	}

	blank := " "
	bad := []struct {
		name string
		id   string
		u    AccountUpdate
		want error
	}{
		{"blank name", a.ID, AccountUpdate{Name: &blank}, ErrInvalid},
		{"negative quota", a.ID, AccountUpdate{MonthlyQuota: ptr(-1)}, ErrInvalid},
		{"zero rate", a.ID, AccountUpdate{RateLimit: ptr(0)}, ErrInvalid},
		{"unknown", "acct_nope", AccountUpdate{RateLimit: ptr(5)}, ErrNotFound},
	}
	for _, tt := range bad {
		if _, err := s.UpdateAccount(ctx, tt.id, tt.u); !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
	if got, _ := s.GetAccount(ctx, a.ID); got.RateLimitPerMinute != 9 || got.MonthlyQuota != 0 {
		t.Errorf("a refused update changed the account: %+v", got)
	}

	// Disable, twice (the first time stays), seen through the key lookup;
	// enable again.
	_, secret, err := s.CreateKey(ctx, NewKey{AccountID: b.ID, Scopes: []string{ScopeReportsRead}})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	first := truncMs(now)
	d, err := s.SetAccountDisabled(ctx, b.ID, true)
	if err != nil || !d.Disabled() || !d.DisabledUTC.Equal(first) {
		t.Fatalf("disable = %+v, %v", d, err)
	}
	now = now.Add(time.Minute)
	if d, err = s.SetAccountDisabled(ctx, b.ID, true); err != nil || !d.DisabledUTC.Equal(first) {
		t.Errorf("second disable = %+v, %v; want the first time kept", d, err)
	}
	if _, acct, err := s.KeyBySecret(ctx, secret); err != nil || !acct.Disabled() {
		t.Errorf("KeyBySecret of a disabled account: %+v, %v", acct, err)
	}
	if list, _ := s.ListAccounts(ctx); !list[1].Disabled() || list[0].Disabled() {
		t.Errorf("ListAccounts after disable: %+v", list)
	}
	if d, err = s.SetAccountDisabled(ctx, b.ID, false); err != nil || d.Disabled() {
		t.Errorf("enable = %+v, %v", d, err)
	}
	if _, acct, _ := s.KeyBySecret(ctx, secret); acct.Disabled() {
		t.Error("KeyBySecret still sees the account disabled after enable")
	}
	if _, err := s.SetAccountDisabled(ctx, "acct_nope", true); !errors.Is(err, ErrNotFound) {
		t.Errorf("disable unknown: %v, want ErrNotFound", err)
	}
}

func TestKeyNamesAndLastUse(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	a := newAccount(t, s, 10)

	names := []struct {
		name string
		ok   bool
	}{
		{"", true},
		{"CI pipeline (prod)", true},
		{"Zürich office ✓", true},
		{strings.Repeat("é", MaxKeyNameLen), true},
		{strings.Repeat("é", MaxKeyNameLen+1), false},
		{"two\nlines", false},
		{"escape \x1b[31m", false},
		{"bad \xff utf-8", false},
	}
	for _, tt := range names {
		k, _, err := s.CreateKey(ctx, NewKey{AccountID: a.ID, Name: tt.name, Scopes: []string{ScopeReportsRead}})
		if tt.ok != (err == nil) || (err != nil && !errors.Is(err, ErrInvalid)) {
			t.Errorf("CreateKey name %q: err %v, want ok=%v", tt.name, err, tt.ok)
			continue
		}
		if err == nil && k.Name != tt.name {
			t.Errorf("CreateKey name %q returned %q", tt.name, k.Name)
		}
	}
	// Created in the same millisecond, keys list in id order: find them by
	// name.
	byName := func() map[string]APIKey {
		t.Helper()
		keys, err := s.ListKeys(ctx, a.ID)
		if err != nil || len(keys) != 4 {
			t.Fatalf("ListKeys = %+v, %v; want 4 keys", keys, err)
		}
		m := map[string]APIKey{}
		for _, k := range keys {
			m[k.Name] = k
		}
		return m
	}
	keys := byName()
	ci, plain, other := keys["CI pipeline (prod)"], keys[""], keys["Zürich office ✓"]
	if ci.ID == "" || plain.ID == "" || other.ID == "" || ci.LastUsedUTC != nil {
		t.Fatalf("listed names: %+v", keys)
	}

	t1 := t0.Add(time.Hour)
	if err := s.RecordKeyUse(ctx, []KeyUse{{KeyID: plain.ID, At: t1}, {KeyID: ci.ID, At: t1.Add(time.Minute)}, {KeyID: "key_purged", At: t1}}); err != nil {
		t.Fatal(err)
	}
	// An older time (another process's late flush) does not move it back.
	if err := s.RecordKeyUse(ctx, []KeyUse{{KeyID: plain.ID, At: t1.Add(-time.Minute)}}); err != nil {
		t.Fatal(err)
	}
	keys = byName()
	if got := keys[""].LastUsedUTC; got == nil || !got.Equal(t1) {
		t.Errorf("last use of the unnamed key = %v, want %v", got, t1)
	}
	if got := keys["CI pipeline (prod)"].LastUsedUTC; got == nil || !got.Equal(t1.Add(time.Minute)) {
		t.Errorf("last use of the CI key = %v, want %v", got, t1.Add(time.Minute))
	}
	if got := keys["Zürich office ✓"].LastUsedUTC; got != nil {
		t.Errorf("unused key has last use %v", got)
	}
	if err := s.RecordKeyUse(ctx, nil); err != nil {
		t.Errorf("RecordKeyUse(nil): %v", err)
	}
}

func TestProbeWrite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "probe.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	size := func() int64 {
		var n int64
		for _, suffix := range []string{"", "-wal"} {
			if fi, err := os.Stat(path + suffix); err == nil {
				n += fi.Size()
			}
		}
		return n
	}
	v := s.WithBusyWait(100 * time.Millisecond)
	if err := v.ProbeWrite(ctx); err != nil {
		t.Fatalf("ProbeWrite on an idle database: %v", err)
	}
	before := size()
	for range 50 {
		if err := v.ProbeWrite(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if after := size(); after != before {
		t.Errorf("50 probes grew the files from %d to %d bytes", before, after)
	}

	// Another process's write lock: ErrBusy after the view's wait, not
	// after the default one.
	release := foreignLock(t, s)
	start := time.Now()
	err = v.ProbeWrite(ctx)
	if !errors.Is(err, ErrBusy) {
		t.Errorf("ProbeWrite under a foreign lock: %v, want ErrBusy", err)
	}
	if took := time.Since(start); took >= DefaultBusyWait {
		t.Errorf("ProbeWrite took %s under a foreign lock", took)
	}
	release()
	if err := v.ProbeWrite(ctx); err != nil {
		t.Errorf("ProbeWrite after the lock is gone: %v", err)
	}
}

// undoMigration7 drops the columns migration 7 added (and what migration
// 10 added, undoMigration10), for tests that turn a fresh file back into
// an older version: ALTER TABLE ADD COLUMN cannot be repeated the way the
// earlier migrations' CREATE ... IF NOT EXISTS can.
func undoMigration7(t testing.TB, s *Store) {
	t.Helper()
	undoMigration10(t, s)
	for _, q := range []string{
		`ALTER TABLE accounts DROP COLUMN disabled_utc`,
		`ALTER TABLE api_keys DROP COLUMN name`,
		`ALTER TABLE api_keys DROP COLUMN last_used_utc`,
	} {
		if _, err := s.db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// undoMigration10 takes back what migration 010 added that it could not
// add twice (a table, triggers, columns), so that a test can make a file
// look older and migrate it again.
func undoMigration10(t testing.TB, s *Store) {
	t.Helper()
	for _, q := range []string{
		`DROP TRIGGER report_jobs_usage_insert`, `DROP TRIGGER report_jobs_usage_update`, `DROP TRIGGER report_jobs_usage_delete`,
		`DROP TRIGGER report_jobs_batch_update`, `DROP TRIGGER batch_items_insert`, `DROP TRIGGER batch_items_delete`,
		`DROP TRIGGER webhook_deliveries_ops_insert`,
		`DROP TRIGGER webhook_deliveries_ops_update`, `DROP TRIGGER webhook_deliveries_ops_delete`,
		`DROP TABLE usage_hourly`, `DROP TABLE ops_hourly`,
		`DROP INDEX report_jobs_ended`, `DROP INDEX batches_by_status`, `DROP INDEX report_jobs_by_status`,
		`DROP INDEX webhook_deliveries_by_status`, `DROP INDEX webhook_deliveries_failed`,
		`ALTER TABLE batches DROP COLUMN items_open`, `ALTER TABLE batches DROP COLUMN items_completed`,
		`ALTER TABLE batches DROP COLUMN items_failed`, `ALTER TABLE batches DROP COLUMN items_rejected`,
		`ALTER TABLE batches DROP COLUMN items_ended_utc`,
		`CREATE INDEX report_jobs_by_completion ON report_jobs(account_id, completed_utc) WHERE completed_utc IS NOT NULL`,
	} {
		if _, err := s.db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
