package pgstore

// Job creations share transactions. Every creation of an account takes its
// month's quota row lock until its transaction commits (the package
// comment), so one account's creations commit one after the other, and
// with one commit each they would be bound by the disk's flush time
// (about 200 a second on a disk that flushes in 5 ms). Creations that
// arrive while a transaction runs are gathered and made together in the
// next, each in a savepoint of its own, so a refused one (quota,
// conflict) leaves the others' writes standing; one commit then serves
// them all, as the SQLite store's group commit does
// (docs/postgres.md, Performance).

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
)

// maxCreationsPerTx bounds a shared transaction.
const maxCreationsPerTx = 128

// creation is a created (or replayed) job.
type creation struct {
	job      locrisk.Job
	replayed bool
}

type createRequest struct {
	ctx  context.Context
	nj   locrisk.NewJob
	now  time.Time
	done chan createResult // buffered, one result
}

type createResult struct {
	creation
	err error
}

// creator gathers creations and makes them in shared transactions, one
// at a time, on its own goroutine, started with the first creation.
type creator struct {
	s        *Store
	requests chan *createRequest
	closing  chan struct{}
	start    sync.Once
	stopped  chan struct{}
}

func newCreator(s *Store) *creator {
	return &creator{s: s, requests: make(chan *createRequest, maxCreationsPerTx), closing: make(chan struct{}), stopped: make(chan struct{})}
}

// create queues one creation and waits for its outcome.
func (c *creator) create(ctx context.Context, nj locrisk.NewJob, now time.Time) (creation, error) {
	c.start.Do(func() { go c.run() })
	req := &createRequest{ctx: ctx, nj: nj, now: now, done: make(chan createResult, 1)}
	select {
	case c.requests <- req:
	case <-c.closing:
		return creation{}, locrisk.ErrClosed
	case <-ctx.Done():
		return creation{}, ctx.Err()
	}
	// Once queued, the creation runs (or is dropped unrun if ctx ended
	// before its turn); its outcome always arrives.
	res := <-req.done
	return res.creation, res.err
}

// close stops the creator once the creations queued have their outcome.
func (c *creator) close() {
	select {
	case <-c.closing:
		return
	default:
	}
	close(c.closing)
	c.start.Do(func() { close(c.stopped) }) // never started: nothing to wait for
	<-c.stopped
}

func (c *creator) run() {
	defer close(c.stopped)
	for {
		var batch []*createRequest
		select {
		case req := <-c.requests:
			batch = append(batch, req)
		case <-c.closing:
			// Answer what is still queued, then stop.
			for {
				select {
				case req := <-c.requests:
					c.makeAll([]*createRequest{req})
				default:
					return
				}
			}
		}
	gather:
		for len(batch) < maxCreationsPerTx {
			select {
			case req := <-c.requests:
				batch = append(batch, req)
			default:
				break gather
			}
		}
		c.makeAll(batch)
	}
}

// makeAll makes the batch's creations in one transaction, each in its own
// savepoint, and answers each. Accounts are taken in id order, so that two
// nodes' batches lock quota rows in the same order and do not deadlock.
func (c *creator) makeAll(batch []*createRequest) {
	live := batch[:0:0]
	for _, req := range batch {
		if err := req.ctx.Err(); err != nil {
			req.done <- createResult{err: err}
			continue
		}
		live = append(live, req)
	}
	if len(live) == 0 {
		return
	}
	slices.SortStableFunc(live, func(a, b *createRequest) int { return strings.Compare(a.nj.AccountID, b.nj.AccountID) })
	results := make([]createResult, len(live))
	ctx := context.Background()
	var accounts []string
	for _, req := range live {
		if len(accounts) == 0 || accounts[len(accounts)-1] != req.nj.AccountID {
			accounts = append(accounts, req.nj.AccountID)
		}
	}
	err := c.s.withTx(ctx, func(tx *sqlx.Tx) error {
		// The accounts' rows first, in id order: every transaction that
		// creates jobs takes its accounts' locks before any idempotency
		// key or quota row, so two nodes' transactions never wait for each
		// other in a circle.
		if err := lockAccounts(ctx, tx, accounts); err != nil {
			return err
		}
		for i, req := range live {
			if _, err := tx.ExecContext(ctx, `SAVEPOINT creation`); err != nil {
				return err
			}
			made, err := createOne(ctx, tx, req.nj, req.now)
			if retryable(err) {
				return err // the whole transaction runs again
			}
			if err != nil {
				if _, rerr := tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT creation`); rerr != nil {
					return fmt.Errorf("%w (and rolling back: %v)", err, rerr)
				}
			} else if _, err := tx.ExecContext(ctx, `RELEASE SAVEPOINT creation`); err != nil {
				return err
			}
			results[i] = createResult{creation: made, err: err}
		}
		return nil
	})
	for i, req := range live {
		if err != nil {
			req.done <- createResult{err: err}
			continue
		}
		req.done <- results[i]
	}
}

// lockAccounts locks the rows of accounts (sorted, distinct) until the
// transaction ends; unknown ids are left to the creation to report. FOR NO
// KEY UPDATE, not FOR UPDATE: the rows that refer to an account (a claim's
// turn, a report) take a key-share lock on it, which FOR UPDATE would
// make wait for the creations' commit.
func lockAccounts(ctx context.Context, tx *sqlx.Tx, accounts []string) error {
	if _, err := tx.ExecContext(ctx, `SELECT id FROM accounts WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE`, accounts); err != nil {
		return fmt.Errorf("lock accounts: %w", err)
	}
	return nil
}
