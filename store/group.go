package store

// Group commit: the write transactions of concurrent callers share one
// SQLite transaction and so one commit, one fsync (README.md, The database file).
//
// Every WithTx call queues its function. The caller that finds no group
// forming leads: it waits for the write slot (lockWrite), takes every
// function queued by then (its own first), runs them one after the other
// in one BEGIN IMMEDIATE transaction, each inside its own SAVEPOINT, and
// commits once. Only then does each caller get its answer. A function
// that fails is rolled back to its savepoint, so its error (a quota
// refusal, an idempotency conflict, ErrLeaseLost) is its own and the
// others commit; a failed commit fails every function of the group. While
// one group commits, the next one gathers: the functions that arrive
// during the commit wait for it and go together in the next, whose leader
// is the first of them. A lone caller finds the slot free and commits at
// once, so there is no timer and no added wait when the writer is idle.
//
// Functions run in the order they were queued and see the writes of those
// before them in the group, exactly as consecutive transactions would, so
// the guarantees that rest on serialised writes hold unchanged: the quota
// counter cannot be overshot, one idempotency key makes one resource, a
// batch is completed in exactly one function.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
)

// maxGroup bounds the functions in one group, so that one commit's wait
// stays short under a flood; the rest go in the next group.
const maxGroup = 256

// committer is the queue of write functions waiting for a group. A store
// and its views (WithBusyWait) share one.
type committer struct {
	mu      sync.Mutex
	pending []*groupWrite
	leading bool // a leader is waiting for the slot or committing
}

// groupWrite is one WithTx call waiting in the committer.
type groupWrite struct {
	ctx    context.Context
	view   *Store // the caller's view: its busy and queue waits apply while it leads
	fn     func(tx *sqlx.Tx) error
	queued time.Time

	// Set under committer.mu. taken: a leader has taken the function into
	// its group, so it will run (or be skipped) there. Then wake is closed
	// when either err holds the outcome (done) or this call has been made
	// the next leader (lead).
	wake  chan struct{}
	taken bool
	done  bool
	lead  bool
	err   error
	// panicked holds what fn panicked with, to panic with again in the
	// caller's goroutine; the group goes on without fn's writes.
	panicked any
}

// call runs w's function, turning a panic into w's error.
func (w *groupWrite) call(tx *sqlx.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			w.panicked = p
			err = fmt.Errorf("store: write function panicked: %v", p)
		}
	}()
	return w.fn(tx)
}

// result is w's outcome for its caller: its error, or its function's
// panic raised again.
func (w *groupWrite) result() error {
	if w.panicked != nil {
		panic(w.panicked)
	}
	return w.err
}

// groupTx runs fn in the next group commit and returns fn's error, or
// the group's when the group as a whole could not commit.
func (s *Store) groupTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	c := s.group
	w := &groupWrite{ctx: ctx, view: s, fn: fn, queued: time.Now(), wake: make(chan struct{})}
	c.mu.Lock()
	c.pending = append(c.pending, w)
	lead := !c.leading
	c.leading = true
	c.mu.Unlock()
	if !lead {
		if err := c.await(w); err != nil {
			return err
		}
		if !w.lead {
			return w.result()
		}
	}
	c.lead(w)
	return w.result()
}

// await waits until w is answered or made leader. A caller that gives up
// first (its context ends, or on a view with a busy wait, the waits of
// lockWrite run out) leaves the queue with that error, unless its function
// has already been taken into a group, whose outcome it must then learn.
func (c *committer) await(w *groupWrite) error {
	s := w.view
	if s.busyWait > 0 {
		t := time.NewTimer(s.firstWaitCheck(w.queued))
		defer t.Stop()
		for {
			select {
			case <-w.wake:
				return nil
			case <-w.ctx.Done():
				return c.giveUp(w, w.ctx.Err())
			case now := <-t.C:
				next, err := s.waitedTooLong(now, w.queued)
				if err != nil {
					return c.giveUp(w, err)
				}
				t.Reset(next)
			}
		}
	}
	select {
	case <-w.wake:
		return nil
	case <-w.ctx.Done():
		return c.giveUp(w, w.ctx.Err())
	}
}

// giveUp takes w out of the queue with err if it is still waiting there;
// otherwise (taken into a group, or made leader) it waits for w's turn
// and returns nil.
func (c *committer) giveUp(w *groupWrite, err error) error {
	c.mu.Lock()
	if !w.taken && !w.lead {
		c.pending = removeWrite(c.pending, w)
		c.mu.Unlock()
		return err
	}
	c.mu.Unlock()
	<-w.wake
	return nil
}

// lead is the leader's work: wait for the slot, take the queue, run it as
// one transaction, answer everyone in it, and hand the lead to the first
// caller that queued meanwhile.
func (c *committer) lead(leader *groupWrite) {
	s := leader.view
	lockErr := s.lockWriteSince(context.WithoutCancel(leader.ctx), leader.queued)
	c.mu.Lock()
	var group []*groupWrite
	if lockErr != nil {
		// Only the leader has waited its full wait; the others may still
		// get the slot within theirs.
		c.pending = removeWrite(c.pending, leader)
		group = []*groupWrite{leader}
	} else {
		n := min(len(c.pending), maxGroup)
		group = append(group, c.pending[:n]...)
		c.pending = append([]*groupWrite(nil), c.pending[n:]...)
		for _, w := range group {
			w.taken = true
		}
	}
	c.mu.Unlock()

	if s.obs != nil {
		now := time.Now()
		for _, w := range group {
			s.obs.WriteWait(now.Sub(w.queued))
		}
	}
	if lockErr != nil {
		leader.err = lockErr
	} else {
		s.commitGroup(group)
		s.unlockWrite()
		if s.obs != nil {
			s.obs.GroupCommit(len(group))
		}
	}

	c.mu.Lock()
	for _, w := range group {
		if w != leader {
			w.done = true
			close(w.wake)
		}
	}
	if len(c.pending) > 0 {
		next := c.pending[0]
		next.lead = true
		close(next.wake)
	} else {
		c.leading = false
	}
	c.mu.Unlock()
}

// commitGroup runs the group's functions in one transaction and sets each
// one's err. Each runs inside a savepoint, rolled back if it fails; a
// function whose caller has given up is not run. If the transaction cannot
// begin or commit, or a savepoint cannot be rolled back (the connection is
// no longer usable), every function that had succeeded gets that error,
// since none of their writes committed.
func (s *Store) commitGroup(group []*groupWrite) {
	if len(group) == 1 {
		// Alone, the function's transaction is its own: no savepoint,
		// its failure rolls the transaction back.
		w := group[0]
		if w.err = w.ctx.Err(); w.err == nil {
			w.err = s.runTx(context.WithoutCancel(w.ctx), w.call)
		}
		return
	}
	run := func(tx *sqlx.Tx) error {
		ctx := context.WithoutCancel(group[0].ctx)
		for _, w := range group {
			if err := w.ctx.Err(); err != nil {
				w.err = err
				continue
			}
			if _, err := tx.ExecContext(ctx, `SAVEPOINT write`); err != nil {
				return fmt.Errorf("savepoint: %w", err)
			}
			// A caller whose context ends while its function runs has
			// that function's statement interrupted (the driver's
			// cancellation): the function fails and its savepoint is
			// rolled back, as its own transaction would have been.
			w.err = busy(w.call(tx))
			if w.err != nil {
				if _, err := tx.ExecContext(ctx, `ROLLBACK TO write`); err != nil {
					return fmt.Errorf("roll back to savepoint: %w", err)
				}
			}
			if _, err := tx.ExecContext(ctx, `RELEASE write`); err != nil {
				return fmt.Errorf("release savepoint: %w", err)
			}
		}
		return nil
	}
	err := s.runTx(context.WithoutCancel(group[0].ctx), run)
	if err != nil {
		for _, w := range group {
			if w.err == nil {
				w.err = err
			}
		}
	}
}

// removeWrite returns ws without w (which it may modify in place).
func removeWrite(ws []*groupWrite, w *groupWrite) []*groupWrite {
	for i, x := range ws {
		if x == w {
			return append(ws[:i], ws[i+1:]...)
		}
	}
	return ws
}
