// Package retention runs the retention purge: how long records are kept
// (docs/operations.md, "Limits and defaults"), and the periodic run of the store's
// purge with the incremental vacuum that gives the freed space back.
// Which rows may go, and how they are deleted without stalling writers, is
// the store's (locrisk.Retention).
package retention

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/locrisk/locrisk"
)

const (
	// DefaultKeep is how long finished records are kept by default: twice
	// the 90 days of usage history (docs/api.md, GET /usage/history), so a
	// report stays readable for half a year and the history never loses a
	// day.
	DefaultKeep = 180 * 24 * time.Hour
	// MinKeep is the shortest retention allowed: the 90 days of usage
	// history plus a day, since the history counts whole UTC days. It also
	// covers the 168 hours of the operations summary and the current
	// month of the quota.
	MinKeep = 91 * 24 * time.Hour
	// DefaultInterval is how often the service purges.
	DefaultInterval = time.Hour
	// VacuumStep is how many free pages one incremental vacuum transaction
	// gives back (4 KiB each: 1 MiB).
	VacuumStep = 256
)

// Config tunes a Purger.
type Config struct {
	// Keep is the retention period; 0 keeps every record (only expired
	// idempotency keys are forgotten).
	Keep time.Duration
	// Interval between two runs [DefaultInterval].
	Interval time.Duration
	// Batch bounds the rows per transaction [the store's default].
	Batch int
	// Reclaim, if set, gives the space a purge freed back to the file
	// system and returns the pages it freed (SQLite's incremental vacuum,
	// VacuumStep pages at a time, which the assembly in cmd/locrisk
	// passes). A store that reclaims space by itself needs none.
	Reclaim func(ctx context.Context) (int64, error)
	Now     func() time.Time // [time.Now]
	Logger  *slog.Logger     // [slog.Default]
}

// Purger purges on a schedule (Run) or once (Once).
type Purger struct {
	st  locrisk.Retention
	cfg Config
}

// New returns a Purger of st.
func New(st locrisk.Retention, cfg Config) *Purger {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Purger{st: st, cfg: cfg}
}

// CheckKeep reports whether keep is a usable retention period: 0 (off)
// or at least MinKeep.
func CheckKeep(keep time.Duration) error {
	if keep != 0 && keep < MinKeep {
		return fmt.Errorf("%s is shorter than the %s usage history needs (0 turns the purge off)", keep, MinKeep)
	}
	return nil
}

// Result is what one run did.
type Result struct {
	Counts     locrisk.PurgeCounts
	FreedPages int64
	Before     time.Time // the cut-off; zero when retention is off
	Took       time.Duration
}

// Once purges what the policy allows now and then, unless dry, gives the
// free pages back to the file system. It logs one line with the counts.
func (p *Purger) Once(ctx context.Context, dry bool) (Result, error) {
	start := time.Now()
	now := p.cfg.Now()
	var r Result
	if p.cfg.Keep > 0 {
		r.Before = now.Add(-p.cfg.Keep)
	}
	var err error
	r.Counts, err = p.st.Purge(ctx, locrisk.PurgePolicy{Before: r.Before, Now: now, Batch: p.cfg.Batch, DryRun: dry})
	if err == nil && !dry && r.Counts.Total() > 0 && p.cfg.Reclaim != nil {
		r.FreedPages, err = p.cfg.Reclaim(ctx)
	}
	r.Took = time.Since(start)
	attrs := append([]any{"dry_run", dry, "before", r.Before, "freed_pages", r.FreedPages, "took", r.Took.Round(time.Millisecond)},
		r.Counts.LogAttrs()...)
	if err != nil && ctx.Err() != nil {
		// Stopped (the service is shutting down): what was committed stays,
		// the next run goes on from there.
		p.cfg.Logger.Info("retention purge stopped", attrs...)
		return r, fmt.Errorf("retention purge: %w", err)
	}
	if err != nil {
		p.cfg.Logger.Warn("retention purge failed", append(attrs, "err", err)...)
		return r, fmt.Errorf("retention purge: %w", err)
	}
	p.cfg.Logger.Info("retention purge", attrs...)
	return r, nil
}

// Run purges now and then every Interval until ctx ends. A run in
// progress stops between two of its transactions.
func (p *Purger) Run(ctx context.Context) {
	t := time.NewTicker(p.cfg.Interval)
	defer t.Stop()
	for {
		if _, err := p.Once(ctx, false); err != nil && ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
