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
	"errors"
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
	fn     func(ctx context.Context, tx *sqlx.Tx) error
	queued time.Time

	// Set under committer.mu. taken: a leader has taken the function into
	// its group, so it will run (or be skipped) there. Then wake is closed
	// when either err holds the outcome or this call has been made the
	// next leader (lead).
	wake  chan struct{}
	taken bool
	lead  bool
	err   error
	// panicked holds what fn panicked with, to panic with again in the
	// caller's goroutine; the group goes on without fn's writes.
	panicked any
}

// errLeaderExited is the outcome of the functions of a group whose
// leader's goroutine ended before the commit (runtime.Goexit in one of
// them): nothing of theirs was committed.
var errLeaderExited = errors.New("store: the write group's goroutine exited before its commit")

// call runs w's function, turning a panic into w's error. The function
// gets its caller's context without the cancellation: SQLite answers a
// write statement interrupted inside a transaction by rolling back the
// whole transaction, which here is the group's. A caller that gives up
// before its turn is not run at all.
func (w *groupWrite) call(tx *sqlx.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			w.panicked = p
			err = fmt.Errorf("store: write function panicked: %v", p)
		}
	}()
	return w.fn(context.WithoutCancel(w.ctx), tx)
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
func (s *Store) groupTx(ctx context.Context, fn func(ctx context.Context, tx *sqlx.Tx) error) error {
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
// lockWrite run out: the leader ahead is held up by another process's
// lock, or this process's writes queue too long) leaves the queue with
// that error, unless its function has already been taken into a group,
// whose outcome it must then learn.
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
		w.view.observeWait(w)
		return err
	}
	c.mu.Unlock()
	<-w.wake
	return nil
}

// lead is the leader's work: wait for the write slot and SQLite's write
// lock, take the queue, run it as one transaction, answer everyone in it,
// and hand the lead to the first caller that queued meanwhile. The group
// is taken only once the transaction holds the lock, so that while the
// leader waits for it (another process holds it) every other caller
// still waits by its own rules (await) and may give up.
func (c *committer) lead(leader *groupWrite) {
	s := leader.view
	var group []*groupWrite
	committed := false
	// Deferred, so that the callers are answered and the lead handed on
	// even if the goroutine ends inside a function (runtime.Goexit).
	defer func() { c.handOff(leader, group, committed) }()

	if err := s.lockWriteSince(leader.ctx, leader.queued); err != nil {
		c.leaveAlone(leader, err)
		return
	}
	defer s.unlockWrite()
	err := s.runTx(context.WithoutCancel(leader.ctx), func(tx *sqlx.Tx) error {
		group = c.take()
		return runGroup(tx, group)
	})
	if group == nil {
		// The transaction did not begin (another process's lock outlasted
		// the leader's busy wait): only the leader has waited its full
		// wait; the others may still get the lock within theirs.
		c.leaveAlone(leader, err)
		return
	}
	for _, w := range group {
		if w.err == nil {
			w.err = err // nil, or why none of the group's writes committed
		}
	}
	if err == nil && s.obs != nil {
		s.obs.GroupCommit(len(group))
	}
	committed = true
}

// leaveAlone fails the leader with err before any group was taken.
func (c *committer) leaveAlone(leader *groupWrite, err error) {
	c.mu.Lock()
	c.pending = removeWrite(c.pending, leader)
	c.mu.Unlock()
	leader.err = err
	leader.view.observeWait(leader)
}

// take takes the group from the queue: every function queued, in order,
// up to maxGroup (the leader's is the first).
func (c *committer) take() []*groupWrite {
	c.mu.Lock()
	n := min(len(c.pending), maxGroup)
	group := append([]*groupWrite(nil), c.pending[:n]...)
	c.pending = append([]*groupWrite(nil), c.pending[n:]...)
	for _, w := range group {
		w.taken = true
	}
	c.mu.Unlock()
	for _, w := range group {
		w.view.observeWait(w)
	}
	return group
}

// handOff answers the group's callers (the leader returns by itself) and
// makes the first caller still queued the next leader. committed is false
// when the leader's goroutine is ending before the group's outcome was
// settled: the functions without an error of their own then get
// errLeaderExited.
func (c *committer) handOff(leader *groupWrite, group []*groupWrite, committed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range group {
		if !committed && w.err == nil {
			w.err = errLeaderExited
		}
		if w != leader {
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
}

// runGroup runs the group's functions in tx and sets each one's err. A
// function alone runs as its own transaction: its error rolls tx back.
// Otherwise each runs inside a savepoint, rolled back if it fails, and a
// function whose caller has given up is not run; runGroup fails (and tx
// is rolled back) only if a savepoint cannot be made, rolled back or
// released, the connection being no longer usable.
func runGroup(tx *sqlx.Tx, group []*groupWrite) error {
	if len(group) == 1 {
		w := group[0]
		if w.err = w.ctx.Err(); w.err == nil {
			w.err = busy(w.call(tx))
		}
		return w.err
	}
	ctx := context.Background()
	for _, w := range group {
		if err := w.ctx.Err(); err != nil {
			w.err = err
			continue
		}
		if _, err := tx.ExecContext(ctx, `SAVEPOINT write`); err != nil {
			return fmt.Errorf("savepoint: %w", err)
		}
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

// removeWrite returns ws without w (which it may modify in place).
func removeWrite(ws []*groupWrite, w *groupWrite) []*groupWrite {
	for i, x := range ws {
		if x == w {
			return append(ws[:i], ws[i+1:]...)
		}
	}
	return ws
}
