package main

// `locrisk db purge`, `db vacuum` and `db migrate`: the retention purge run
// by hand, the one-time switch of an older database file to incremental
// vacuum, and the schema brought up to this binary's. How each is done on
// a file or on PostgreSQL, and what PostgreSQL refuses, is the backend's
// (backend.go).

import (
	"fmt"
	"log/slog"
	"text/tabwriter"

	"github.com/locrisk/locrisk/internal/retention"
)

func (c *cli) dbPurge(args []string) error {
	var retain, db string
	var dry, asJSON bool
	f := c.newFlags("db purge", "[flags]", `
Deletes what the retention period no longer keeps, as a running server
does every hour: finished jobs with their reports, webhook events and
deliveries; completed batches; webhook endpoints disabled before the
period; keys revoked or expired before it; request statistics and quota
counters of older hours and months; expired idempotency keys. Jobs not
finished, batches with unfinished items and pending deliveries stay. Then
it gives the freed space back to the file system. Safe while the server
runs: it deletes a few hundred rows per transaction.

--dry-run counts what would go and deletes nothing (it may count fewer
webhook endpoints: one whose last deliveries go with old jobs is counted
only once they are gone).`, `
  locrisk db purge --dry-run
  locrisk db purge --retention 365d --json`)
	f.StringVar(&retain, "retention", "180d", "how long finished records are kept (`duration` such as 180d or 4320h; at least 91d; 0 keeps everything)")
	f.BoolVar(&dry, "dry-run", false, "count what would be deleted, delete nothing")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.StringVar(&db, "db", "./locrisk.db", dbFlagUsage)
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	keep, err := parseRetention(retain)
	if err != nil {
		return usagef("--retention: %v", err)
	}
	st, err := c.openStore(db, storeUse{mustExist: true})
	if err != nil {
		return err
	}
	defer st.Close()
	purger := st.purger(retention.Config{Keep: keep, Logger: slog.New(slog.NewTextHandler(c.stderr, nil))})
	r, err := purger.Once(c.ctx, dry)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(c.stdout, struct {
			DryRun     bool   `json:"dryRun"`
			Deleted    any    `json:"deleted"`
			FreedPages int64  `json:"freedPages"`
			Before     string `json:"before,omitempty"`
		}{dry, r.Counts, r.FreedPages, beforeText(r)})
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	attrs := r.Counts.LogAttrs()
	for i := 0; i+1 < len(attrs); i += 2 {
		fmt.Fprintf(tw, "%s\t%d\n", attrs[i], attrs[i+1])
	}
	fmt.Fprintf(tw, "freed pages\t%d\n", r.FreedPages)
	return tw.Flush()
}

func beforeText(r retention.Result) string {
	if r.Before.IsZero() {
		return ""
	}
	return apiTime(r.Before)
}

func (c *cli) dbVacuum(args []string) error {
	var db string
	f := c.newFlags("db vacuum", "[flags]", `
Rewrites the database file once so that it can give space back after a
purge (auto_vacuum INCREMENTAL). Files created by this version already
are; a file created by an earlier one needs this once. It locks out
writers for the whole rewrite and needs free disk space about the size of
the file: stop the server first.`, `
  locrisk db vacuum --db ./locrisk.db`)
	f.StringVar(&db, "db", "./locrisk.db", "SQLite database `file`")
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	before, after, err := backendFor(db).vacuum(c.ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "%d bytes before, %d after; incremental vacuum on\n", before, after)
	return nil
}

func (c *cli) dbMigrate(args []string) error {
	var db string
	f := c.newFlags("db migrate", "[--db FILE|URL]", `
Brings the database up to this binary's schema and prints its version.
Every command that opens a database migrates it too; for PostgreSQL, run
this once per upgrade before starting the new version's nodes
(docs/postgres.md). Several at once are safe: PostgreSQL's migrations run
under a lock, and a SQLite file admits one writer at a time.`, `
  locrisk db migrate
  locrisk db migrate --db ./locrisk.db`)
	f.StringVar(&db, "db", "./locrisk.db", dbFlagUsage)
	if err := f.parseNoArgs(args); err != nil {
		return err
	}
	be := backendFor(db)
	v, err := be.migrate(c.ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "%s: schema version %d\n", be, v)
	return nil
}
