package jobs

// The re-score lane (docs/api.md, Re-scoring): watch items whose reports
// were made with other data or methodology versions than this node
// serves, and those an account asked to re-score, are re-scored by the
// scheduler's own workers, but only when no caller's job is runnable: a
// worker that finds the queue empty (ClaimJob found nothing) starts the
// next planned re-score instead (locrisk.RescoreQueue.ClaimRescore). Its
// job is made processing under the worker's lease in the claim's
// transaction, so it never waits in the queue ahead of callers' jobs, and
// a node that dies with it leaves a lease that runs out like any other:
// the job is taken up again, and its final transaction, where the item's
// reports move on and report.changed is written, commits once. The rate
// is bounded per node (Rescore.Rate, `locrisk serve --rescore-rate`).
// Which re-scores are planned, once per item and version change whatever
// the number of nodes, is the store's (PlanRescores): the lane plans at
// its start and every Rescore.PlanInterval after.

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/locrisk/locrisk"
)

// Rescore configures the re-score lane; a nil *Rescore (the default) has
// none.
type Rescore struct {
	Queue locrisk.RescoreQueue
	// Versions are what this node's engine serves: a watch item's report
	// made with other data or methodology versions is re-scored.
	Versions locrisk.ScoreVersions
	// Rate bounds the re-scores this node starts per second; 0 starts
	// none (planning still runs).
	Rate float64
	// PlanInterval is how often the lane plans again, for the items
	// another node scored with older versions meanwhile [10m].
	PlanInterval time.Duration
}

// DefaultRescoreRate is the re-scores a node starts per second at most
// unless told otherwise.
const DefaultRescoreRate = 20

// rescoreLane is the scheduler's lane: its limiter and its queue.
type rescoreLane struct {
	cfg Rescore

	mu     sync.Mutex
	tokens float64
	burst  float64
	last   time.Time
}

func newRescoreLane(cfg *Rescore, poll time.Duration) *rescoreLane {
	if cfg == nil || cfg.Queue == nil {
		return nil
	}
	l := &rescoreLane{cfg: *cfg}
	if l.cfg.PlanInterval <= 0 {
		l.cfg.PlanInterval = 10 * time.Minute
	}
	// One idle poll may start as many as the rate allows until the next
	// one, so the rate is reached with the queue otherwise idle.
	l.burst = max(1, math.Ceil(l.cfg.Rate*poll.Seconds()))
	l.tokens = l.burst
	return l
}

// take spends one start at now, if the rate allows one.
func (l *rescoreLane) take(now time.Time) bool {
	if l.cfg.Rate <= 0 {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() {
		l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.cfg.Rate)
	}
	l.last = now
	if l.tokens < 1 {
		return false
	}
	l.tokens--
	return true
}

// give returns a start that found nothing to re-score.
func (l *rescoreLane) give() {
	l.mu.Lock()
	l.tokens = min(l.burst, l.tokens+1)
	l.mu.Unlock()
}

// claim starts a re-score for owner when the rate allows; ok is false
// when it does not or nothing is planned.
func (l *rescoreLane) claim(ctx context.Context, owner string, lease time.Duration, now time.Time) (locrisk.Job, bool, error) {
	if !l.take(now) {
		return locrisk.Job{}, false, nil
	}
	job, ok, err := l.cfg.Queue.ClaimRescore(ctx, owner, l.cfg.Versions, lease, now)
	if !ok {
		l.give()
	}
	return job, ok, err
}

// planRescores plans the re-scores of the serving versions now and every
// PlanInterval until ctx ends, logging what it planned.
func (s *Scheduler) planRescores(ctx context.Context) {
	l := s.rescore
	t := time.NewTicker(l.cfg.PlanInterval)
	defer t.Stop()
	for {
		n, err := l.cfg.Queue.PlanRescores(ctx, l.cfg.Versions, s.cfg.Now())
		switch {
		case err != nil && ctx.Err() == nil:
			s.log.Error("planning re-scores failed; trying again later", "err", err)
		case n > 0:
			s.log.Info("re-scores planned", "items", n, "data_version", l.cfg.Versions.Data,
				"methodology_version", l.cfg.Versions.Methodology)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
