package pgstore

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/secretbox"
	"github.com/locrisk/locrisk/internal/storetest"
)

// The server the tests use: LOCRISK_TEST_POSTGRES, a connection string
// whose role may create databases (docs/postgres.md says how to start a
// throwaway server; .ci/run starts one).
const serverEnv = "LOCRISK_TEST_POSTGRES"

// TestBehaviour runs the behaviour suite on PostgreSQL, each check on a
// database of its own.
func TestBehaviour(t *testing.T) {
	server := serverDSN(t)
	storetest.Run(t, storetest.Harness{Open: func(t testing.TB, cfg storetest.Config) locrisk.Store {
		return openFresh(t, server, Options{Now: cfg.Now, OnJobFinal: cfg.OnJobFinal})
	}})
}

// TestInvariantsAcrossNodes runs the concurrency invariants with every
// goroutine's call going through its own store, each with its own
// connection pool, as several locrisk nodes on one database would: what
// holds them is the database, not anything in one process.
func TestInvariantsAcrossNodes(t *testing.T) {
	server := serverDSN(t)
	storetest.RunInvariants(t, storetest.Harness{Open: func(t testing.TB, cfg storetest.Config) locrisk.Store {
		first := openFresh(t, server, Options{Now: cfg.Now, OnJobFinal: cfg.OnJobFinal})
		nodes := []*Store{first}
		for range 3 {
			s, err := Open(context.Background(), first.dsn, Options{Now: cfg.Now, OnJobFinal: cfg.OnJobFinal, Secrets: testSecrets(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			nodes = append(nodes, s)
		}
		return &roundRobin{Store: first, nodes: nodes}
	}})
}

// roundRobin spreads the invariants' calls over several stores.
type roundRobin struct {
	*Store
	nodes []*Store
	next  atomic.Uint64
}

func (r *roundRobin) node() *Store { return r.nodes[r.next.Add(1)%uint64(len(r.nodes))] }

func (r *roundRobin) CreateJob(ctx context.Context, j locrisk.NewJob, now time.Time) (locrisk.Job, bool, error) {
	return r.node().CreateJob(ctx, j, now)
}

func (r *roundRobin) ClaimJob(ctx context.Context, owner string, lease time.Duration, now time.Time) (locrisk.Job, bool, error) {
	return r.node().ClaimJob(ctx, owner, lease, now)
}

func (r *roundRobin) CompleteJob(ctx context.Context, jobID, owner string, rep locrisk.Report, now time.Time) (locrisk.Job, error) {
	return r.node().CompleteJob(ctx, jobID, owner, rep, now)
}

// serverDSN is the test server's connection string, or a skip.
func serverDSN(t *testing.T) string {
	dsn := os.Getenv(serverEnv)
	if dsn == "" {
		t.Skipf("need %s, the URL of a PostgreSQL server to test on (docs/postgres.md#testing)", serverEnv)
	}
	return dsn
}

func testSecrets(t testing.TB) *secretbox.Box {
	b, err := secretbox.New(bytes.Repeat([]byte{7}, secretbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// openFresh creates a database of its own for the test on server, opens
// the store on it, and drops it when the test ends.
func openFresh(t testing.TB, server string, opt Options) *Store {
	t.Helper()
	ctx := context.Background()
	admin, err := sqlx.Open("pgx", server)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := "locrisk_test_" + strings.ToLower(strings.TrimPrefix(ids.New("t_"), "t_"))
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		a, err := sqlx.Open("pgx", server)
		if err != nil {
			return
		}
		defer a.Close()
		a.ExecContext(context.Background(), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
	})
	dsn, err := withDatabase(server, name)
	if err != nil {
		t.Fatal(err)
	}
	opt.Secrets = testSecrets(t)
	s, err := Open(ctx, dsn, opt)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	s.dsn = dsn
	t.Cleanup(func() { s.Close() })
	return s
}

// withDatabase is the connection string server naming database name.
func withDatabase(server, name string) (string, error) {
	if strings.HasPrefix(server, "postgres://") || strings.HasPrefix(server, "postgresql://") {
		u, err := url.Parse(server)
		if err != nil {
			return "", err
		}
		u.Path = "/" + name
		return u.String(), nil
	}
	return fmt.Sprintf("%s dbname=%s", server, name), nil
}

// TestMigrateConcurrently: several nodes migrating one new database at
// once apply each migration once, and migrating again changes nothing.
func TestMigrateConcurrently(t *testing.T) {
	server := serverDSN(t)
	s := openFresh(t, server, Options{})
	// A second database, migrated by four nodes at once.
	ctx := context.Background()
	name := "locrisk_test_migrate_" + strings.ToLower(strings.TrimPrefix(ids.New("t_"), "t_"))
	if _, err := s.db.ExecContext(ctx, `CREATE DATABASE `+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.db.ExecContext(context.Background(), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`) })
	dsn, _ := withDatabase(server, name)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			st, err := Open(ctx, dsn, Options{})
			if err == nil {
				err = st.Migrate(ctx)
				st.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatalf("migrate: %v", err)
		}
	}
	st, err := Open(ctx, dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var n int
	if err := st.db.GetContext(ctx, &n, `SELECT COUNT(*) FROM schema_migrations`); err != nil || n != SchemaVersion() {
		t.Errorf("%d migrations recorded (%v), want %d", n, err, SchemaVersion())
	}
}

// TestPurgeOneNodeAtATime: while one node purges, another's purge leaves
// the work to it.
func TestPurgeOneNodeAtATime(t *testing.T) {
	s := openFresh(t, serverDSN(t), Options{})
	ctx := context.Background()
	other, err := Open(ctx, s.dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	// The first node's purge, held in the middle: its lock taken by hand.
	conn, err := s.db.Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, purgeLock); err != nil {
		t.Fatal(err)
	}
	a, err := other.CreateAccount(ctx, "a", 10, 10)
	if err != nil {
		t.Fatal(err)
	}
	key := locrisk.NewJob{AccountID: a.ID, Latitude: 1, Longitude: 1, IdempotencyKey: "k", RequestHash: "h"}
	if _, _, err := other.CreateJob(ctx, key, time.Now().Add(-48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	policy := locrisk.PurgePolicy{Now: time.Now()}
	if c, err := other.Purge(ctx, policy); err != nil || c.Total() != 0 {
		t.Errorf("purge beside another node's: %+v %v, want nothing", c, err)
	}
	conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, purgeLock)
	if c, err := other.Purge(ctx, policy); err != nil || c.IdempotencyKeys != 1 {
		t.Errorf("purge alone: %+v %v, want the expired key", c, err)
	}
}

// TestRateCounts: two nodes' requests add up per account and window, and a
// new window starts from nothing and drops the old one.
func TestRateCounts(t *testing.T) {
	s := openFresh(t, serverDSN(t), Options{})
	ctx := context.Background()
	other, err := Open(ctx, s.dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	w := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	if _, err := s.AddRateCounts(ctx, w, map[string]int{"a": 3, "b": 1}); err != nil {
		t.Fatal(err)
	}
	got, err := other.AddRateCounts(ctx, w, map[string]int{"a": 2})
	if err != nil || got["a"] != 5 || got["b"] != 1 {
		t.Errorf("totals %v %v, want a 5, b 1", got, err)
	}
	got, err = s.AddRateCounts(ctx, w.Add(time.Minute), map[string]int{"a": 1})
	if err != nil || got["a"] != 1 || len(got) != 1 {
		t.Errorf("next window %v %v, want a 1 only", got, err)
	}
	var rows int
	s.db.GetContext(ctx, &rows, `SELECT COUNT(*) FROM rate_windows`)
	if rows != 1 {
		t.Errorf("%d rows kept, want the current window's one", rows)
	}
}

// TestMigrateAgain: migrating a migrated database changes nothing, and a
// database with a migration this binary lacks (a newer locrisk's) is
// refused, as the SQLite store refuses a newer file.
func TestMigrateAgain(t *testing.T) {
	server := serverDSN(t)
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		before  string // SQL run on the migrated database before migrating again
		wantErr string // "" for success
	}{
		{"again (Open migrated it)", ``, ""},
		{"newer database", `INSERT INTO schema_migrations (version, name) VALUES (1000, '1000_from_the_future.sql')`, "newer than this binary"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := openFresh(t, server, Options{})
			if tt.before != "" {
				if _, err := s.db.ExecContext(ctx, tt.before); err != nil {
					t.Fatal(err)
				}
			}
			err := s.Migrate(ctx)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("migrate: %v, want %q", err, tt.wantErr)
			}
			var n int
			if err := s.db.GetContext(ctx, &n, `SELECT COUNT(*) FROM schema_migrations WHERE version <= $1`, SchemaVersion()); err != nil || n != SchemaVersion() {
				t.Errorf("%d migrations recorded (%v), want %d", n, err, SchemaVersion())
			}
		})
	}
}
