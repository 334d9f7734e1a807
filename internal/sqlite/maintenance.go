package sqlite

// Maintenance of the database file: the integrity check Open runs on
// request (Options.IntegrityCheck), the file's page counts, and giving
// free pages back to the file system, a few at a time after the retention
// purge (IncrementalVacuum) or by rewriting the whole file (Vacuum, locrisk
// db vacuum); docs/operations.md, The database file.

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// quickCheck runs PRAGMA quick_check (SQLite's integrity check without
// the index contents), which answers one row "ok" or up to maxProblems
// rows naming what is wrong.
func (s *Store) quickCheck(ctx context.Context) error {
	const maxProblems = 5
	var rows []string
	if err := s.db.SelectContext(ctx, &rows, fmt.Sprintf("PRAGMA quick_check(%d)", maxProblems)); err != nil {
		return fmt.Errorf("integrity check: %w", corrupt(err))
	}
	if len(rows) == 1 && rows[0] == "ok" {
		return nil
	}
	return fmt.Errorf("%w: integrity check found: %s", ErrCorrupt, strings.Join(rows, "; "))
}

// FileStats describes the database file's pages.
type FileStats struct {
	PageSize      int64
	Pages         int64 // pages in the file (PRAGMA page_count)
	FreePages     int64 // unused pages inside it (PRAGMA freelist_count)
	AutoVacuum    int   // 0 none, 1 full, 2 incremental
	IncrementalOK bool  // AutoVacuum is 2: IncrementalVacuum can shrink the file
}

// Bytes is the file's size as SQLite counts it.
func (f FileStats) Bytes() int64 { return f.PageSize * f.Pages }

// FileStats reads the page counts of the database file.
func (s *Store) FileStats(ctx context.Context) (FileStats, error) {
	var f FileStats
	for _, p := range []struct {
		pragma string
		to     any
	}{{"page_size", &f.PageSize}, {"page_count", &f.Pages}, {"freelist_count", &f.FreePages}, {"auto_vacuum", &f.AutoVacuum}} {
		if err := s.db.GetContext(ctx, p.to, "PRAGMA "+p.pragma); err != nil {
			return FileStats{}, fmt.Errorf("read %s: %w", p.pragma, err)
		}
	}
	f.IncrementalOK = f.AutoVacuum == autoVacuumIncremental
	return f, nil
}

// autoVacuumIncremental is PRAGMA auto_vacuum's INCREMENTAL. New files are
// created with it (see initFile); a file created before needs one VACUUM
// (Store.Vacuum) to switch.
const autoVacuumIncremental = 2

// IncrementalVacuum gives free pages back to the file system, step pages
// at a time (one short write transaction each, so writers run between
// steps), until none are left or ctx ends, then checkpoints the WAL so the
// file shrinks now rather than at the next automatic checkpoint. It returns
// the pages freed. A file not in incremental mode is left alone (0, nil):
// its free pages are reused by later writes.
func (s *Store) IncrementalVacuum(ctx context.Context, step int) (int64, error) {
	f, err := s.FileStats(ctx)
	if err != nil || !f.IncrementalOK || f.FreePages == 0 {
		return 0, err
	}
	if step <= 0 {
		step = 256
	}
	var freed int64
	for {
		if err := ctx.Err(); err != nil {
			return freed, err
		}
		var left int64
		err := s.withWriteLock(ctx, func() error {
			conn, err := s.db.Connx(ctx)
			if err != nil {
				return err
			}
			defer conn.Close()
			// The pragma frees its pages one statement step at a time, so
			// it is read to the end rather than executed.
			rows, err := conn.QueryContext(ctx, fmt.Sprintf("PRAGMA incremental_vacuum(%d)", step))
			if err != nil {
				return err
			}
			for rows.Next() {
			}
			if err := errors.Join(rows.Err(), rows.Close()); err != nil {
				return err
			}
			return conn.GetContext(ctx, &left, "PRAGMA freelist_count")
		})
		if err != nil {
			return freed, fmt.Errorf("incremental vacuum: %w", err)
		}
		freed += f.FreePages - left
		f.FreePages = left
		if left == 0 {
			break
		}
	}
	if _, err := s.db.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)"); err != nil {
		return freed, fmt.Errorf("checkpoint after vacuum: %w", err)
	}
	return freed, nil
}

// Vacuum rewrites the whole file with auto_vacuum INCREMENTAL, which a
// file created before this mode was the default needs once. It holds the
// write lock for the whole rewrite (seconds per hundred megabytes) and
// needs free disk space of about the file's size, so it is an operator's
// command (locrisk db vacuum), best run while the server is stopped.
func (s *Store) Vacuum(ctx context.Context) error {
	return s.withWriteLock(ctx, func() error {
		conn, err := s.db.Connx(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		// The mode is a setting of the connection that VACUUM applies.
		for _, q := range []string{fmt.Sprintf("PRAGMA auto_vacuum = %d", autoVacuumIncremental), "VACUUM", "PRAGMA wal_checkpoint(TRUNCATE)"} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	})
}
