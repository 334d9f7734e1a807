package sqlite

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
)

// SchemaVersion is the PRAGMA user_version a fully migrated file carries:
// the number of the last file in migrations/ (TestMigrationFiles keeps the
// two equal, and Open refuses to run if they differ).
const SchemaVersion = 15

// migrationFiles holds the schema's history, one numbered SQL file per
// version; see the package comment. Only *.sql files are part of it.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one numbered file of migrations/.
type migration struct {
	version int    // the user_version the file leaves behind
	name    string // the file name, for messages
	sql     string
}

// migrationName is the form of a migration file name: a three-digit (or
// longer) number from 001, an underscore and a lower-case description.
var migrationName = regexp.MustCompile(`^([0-9]{3,})_[a-z0-9_]+\.sql$`)

// embeddedMigrations are the binary's migrations, read and checked once.
var embeddedMigrations = sync.OnceValues(func() ([]migration, error) {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	ms, err := loadMigrations(sub)
	if err != nil {
		return nil, err
	}
	if last := ms[len(ms)-1]; last.version != SchemaVersion {
		return nil, fmt.Errorf("the last migration is %s but SchemaVersion is %d", last.name, SchemaVersion)
	}
	return ms, nil
})

// loadMigrations reads the migration files at the top of fsys, in version
// order. The numbers must run from 1 without a gap or a repeat, every file
// must be named NNN_description.sql and none may be empty: a mistake here
// would otherwise surface as a database that silently skipped a step.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var ms []migration
	for _, e := range entries {
		name := e.Name()
		sub := migrationName.FindStringSubmatch(name)
		if e.IsDir() || sub == nil {
			return nil, fmt.Errorf("migration %q: not a file named NNN_description.sql", name)
		}
		v, err := strconv.Atoi(sub[1])
		if err != nil || v < 1 {
			return nil, fmt.Errorf("migration %q: bad number", name)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", name, err)
		}
		if strings.TrimSpace(string(b)) == "" {
			return nil, fmt.Errorf("migration %s is empty", name)
		}
		ms = append(ms, migration{version: v, name: name, sql: string(b)})
	}
	if len(ms) == 0 {
		return nil, errors.New("no migrations")
	}
	slices.SortStableFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i, m := range ms {
		switch {
		case i > 0 && m.version == ms[i-1].version:
			return nil, fmt.Errorf("migrations %s and %s have the same number", ms[i-1].name, m.name)
		case m.version != i+1:
			return nil, fmt.Errorf("migration %s: expected number %03d next (the numbers must run from 001 without gaps)", m.name, i+1)
		}
	}
	return ms, nil
}

// migrate brings the file to the last of ms (numbered from 1 without gaps,
// as loadMigrations returns them). Each migration runs in its own
// transaction, which also sets user_version to its number, so a file is
// always at exactly one version. The transactions are immediate (BEGIN
// IMMEDIATE, see the package comment) and read the version again under the
// write lock, so when two processes open a file together one applies a
// migration and the other finds it applied. A file whose version is above
// the last migration's was written by a newer binary and is refused rather
// than used.
func (s *Store) migrate(ctx context.Context, ms []migration) error {
	if len(ms) == 0 {
		return errors.New("no schema migrations")
	}
	latest := ms[len(ms)-1].version
	busyRetries := 0
	for {
		done := false
		err := s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error {
			var v int
			if err := tx.GetContext(ctx, &v, "PRAGMA user_version"); err != nil {
				return fmt.Errorf("read schema version: %w", err)
			}
			switch {
			case v == latest:
				done = true
				return nil
			case v > latest:
				return fmt.Errorf("database schema version %d is newer than this binary supports (%d): the file was written by a newer locrisk; use that version", v, latest)
			case v < 0:
				return fmt.Errorf("database schema version %d is not a locrisk version", v)
			}
			m := ms[v]
			if m.version != v+1 {
				return fmt.Errorf("migration %s follows version %d", m.name, v)
			}
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			// PRAGMA takes no bind parameters; the value is a number.
			if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version)); err != nil {
				return fmt.Errorf("migration %s: set schema version: %w", m.name, err)
			}
			return nil
		})
		if isBusy(err) && busyRetries < maxBusyRetries {
			// Processes opening a new file together race to switch it to
			// WAL; while one does, another's BEGIN IMMEDIATE can fail at
			// once with SQLITE_BUSY, without the busy timeout. Try again.
			busyRetries++
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(busyRetries) * 10 * time.Millisecond):
			}
			continue
		}
		if err != nil || done {
			return err
		}
	}
}

// maxBusyRetries bounds how often a migration retries an immediate
// SQLITE_BUSY (about 5 s in all).
const maxBusyRetries = 30
