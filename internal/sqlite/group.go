package sqlite

// Group commit: the write transactions of concurrent callers share one
// SQLite transaction and so one commit, one fsync (docs/operations.md, The database file).
//
// Every WithTx call queues its function. The caller that finds no writer
// running starts one: a goroutine that runs groups back to back for as long
// as functions are queued, then ends. For each group it waits for the write
// slot (lockWrite) on behalf of the first function queued, takes every
// function queued by then, runs them one after the other in one BEGIN
// IMMEDIATE transaction, each inside its own SAVEPOINT, and commits once.
// Only then does each caller get its answer. A function that fails is
// rolled back to its savepoint, so its error (a quota refusal, an
// idempotency conflict, ErrLeaseLost) is its own and the others commit; a
// failed commit fails every function of the group. While one group
// commits, the next one gathers: the functions that arrive during the
// commit go together in the next group, which the same goroutine begins as
// soon as the commit returns. A lone caller finds the writer idle and its
// function runs at once, so there is no timer and no added wait when the
// writer is idle (beyond starting the writer goroutine). Writes of one
// kind queued one after the other (writeKind; job creation, jobcreate.go)
// are made with one set of statements instead of one function each, when
// that gives every one of them the outcome it would have had alone
// (runTogether). Store.Close stops the queue (ErrClosed) and waits for the
// writer to answer what it holds (close).
//
// The writer is a goroutine of its own, rather than one of the callers,
// because handing the lead from one caller's goroutine to the next cost a
// scheduler wake-up per group: under load about a quarter of a
// millisecond, a fifth of each group's time, with the write lock idle.
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
	"github.com/locrisk/locrisk"
)

// maxGroup bounds the functions in one group, so that one commit's wait
// stays short under a flood; the rest go in the next group.
const maxGroup = 256

// committer is the queue of write functions waiting for a group. A store
// and its views (WithBusyWait) share one.
type committer struct {
	mu      sync.Mutex
	pending []*groupWrite
	running bool // a writer goroutine is running groups (write)
	// writers counts the writer goroutines not yet ended, each until it
	// has given back its connection (more than one only for a moment:
	// a writer ending as the next begins).
	writers int
	// keepConn: the writer keeps its connection from one group to the
	// next (writeConn); not with a pool of one connection.
	keepConn bool
	// noGatherUntil: the writer does not wait for a group to gather
	// before then (gather). Only the writer goroutine, one at a time,
	// uses it.
	noGatherUntil time.Time
	// While the writer waits for a group to gather: gathered is closed
	// once gatherTo functions are queued.
	gatherTo int
	gathered chan struct{}
	// closed: the store is closing (Store.Close) and takes no new write;
	// drained is then closed once no writer goroutine is left, every write
	// queued before having its outcome and the connections given back.
	closed  bool
	drained chan struct{}
}

// groupWrite is one WithTx call waiting in the committer.
type groupWrite struct {
	ctx    context.Context
	view   *Store // the caller's view: its busy and queue waits apply while its group waits for the lock
	fn     func(ctx context.Context, tx *sqlx.Tx) error
	queued time.Time
	// kind, when set, is the kind of write fn makes, and arg what
	// kind.merge gets for it: writes of one kind, queued one after the
	// other, may be made together (runTogether) instead of one fn at a
	// time.
	kind *writeKind
	arg  any

	// Set under committer.mu. first: the writer is waiting for the lock on
	// this call's behalf, by this call's rules. taken: the writer has taken
	// the function into its group, so it will run (or be skipped) there.
	// Either way the call stays queued until wake is closed, with err
	// holding the outcome.
	wake  chan struct{}
	first bool
	taken bool
	err   error
	// panicked holds what fn panicked with, to panic with again in the
	// caller's goroutine; the group goes on without fn's writes.
	panicked any
}

// A writeKind is a kind of write that the group may make several of at
// once: writes of one kind queued one after the other in a group are first
// tried with one call of merge instead of one function each (runTogether).
// Job creation is one (jobCreate, jobcreate.go), which is what lets a
// flood of creations share a few statements as well as one commit.
type writeKind struct {
	// merge makes the writes whose args are given (in queue order, those
	// whose callers gave up left out) with one set of statements in tx,
	// and reports whether it made every one of them with the outcome its
	// function would have had alone. When it cannot tell, or on any
	// error, it returns false: the group then undoes its writes and runs
	// the functions one at a time, each to its own outcome.
	merge func(ctx context.Context, tx *sqlx.Tx, args []any) bool
}

// errWriterExited is the outcome of the functions of a group whose
// writer goroutine ended before the commit (runtime.Goexit in one of
// them): nothing of theirs was committed.
var errWriterExited = errors.New("store: the write group's goroutine exited before its commit")

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
// kind, if not nil, is the kind of write fn makes, and arg what kind.merge
// gets for it (groupWrite.kind).
func (s *Store) groupTx(ctx context.Context, kind *writeKind, arg any, fn func(ctx context.Context, tx *sqlx.Tx) error) error {
	c := s.group
	w := &groupWrite{ctx: ctx, view: s, fn: fn, kind: kind, arg: arg, queued: time.Now(), wake: make(chan struct{})}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return locrisk.ErrClosed
	}
	c.pending = append(c.pending, w)
	if c.gatherTo > 0 && len(c.pending) >= c.gatherTo {
		close(c.gathered)
		c.gatherTo = 0
	}
	start := !c.running
	c.running = true
	if start {
		c.writers++
	}
	c.mu.Unlock()
	if start {
		go c.write()
	}
	if err := c.await(w); err != nil {
		return err
	}
	return w.result()
}

// await waits until w is answered. A caller that gives up first (its
// context ends, or on a view with a busy wait, the waits of lockWrite run
// out: the group ahead is held up by another process's lock, or this
// process's writes queue too long) leaves the queue with that error,
// unless the writer is already working on its function, whose outcome it
// must then learn.
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
// otherwise (the writer is waiting for the lock on its behalf, or has
// taken it into a group) it waits for w's answer and returns nil.
func (c *committer) giveUp(w *groupWrite, err error) error {
	c.mu.Lock()
	if !w.taken && !w.first {
		c.pending = removeWrite(c.pending, w)
		c.mu.Unlock()
		w.view.observeWait(w)
		return err
	}
	c.mu.Unlock()
	<-w.wake
	return nil
}

// write is the writer goroutine: it commits groups while functions are
// queued and ends when none is. A function that ends the goroutine
// (runtime.Goexit) fails its group (errWriterExited) and a new writer
// carries on with the queue.
func (c *committer) write() {
	wc := writeConn{keep: c.keepConn}
	finished := false
	defer func() {
		wc.release()
		c.mu.Lock()
		if !finished {
			c.writers++
			go c.write()
		}
		c.writers--
		if c.closed && c.writers == 0 {
			close(c.drained)
		}
		c.mu.Unlock()
	}()
	for {
		n, more := c.commitNext(&wc)
		if !more {
			break
		}
		if !wc.keep {
			// A pool of one connection: the readers need it between groups.
			wc.release()
		}
		if n > 1 {
			c.gather(n)
		}
	}
	finished = true
}

// gather is the writer's wait, after committing a group of n functions,
// for the next group to reach n too: under a steady load of concurrent
// writes, the requests answered by the group come back as the next ones.
// It waits at most gatherWait, and not at all when n are queued already,
// when none is (the writer is about to end), or for a while after a wait
// that overslept (see gatherOverslept).
//
// Go runs a goroutine woken by the writer on the writer's processor,
// after the writer; busy with SQL from one group to the next, the writer
// kept the callers it had just answered waiting for a processor (half a
// millisecond on two cores, measured) while their answers were ready, and
// the next group started with the few requests already queued. While the
// writer waits, the callers send their answers and their clients' next
// requests join the group, so each commit, and its fsync, serves more of
// them. Measured side by side with BenchmarkCreateJob, creation
// throughput rose by about a fifth against none, and by a tenth against a
// fixed 50 us pause. A lone write never waits.
func (c *committer) gather(n int) {
	start := time.Now()
	if start.Before(c.noGatherUntil) {
		return
	}
	c.mu.Lock()
	if len(c.pending) == 0 || len(c.pending) >= n {
		c.mu.Unlock()
		return
	}
	gathered := make(chan struct{})
	c.gatherTo, c.gathered = n, gathered
	c.mu.Unlock()
	t := time.NewTimer(gatherWait)
	select {
	case <-gathered:
	case <-t.C:
	}
	t.Stop()
	c.mu.Lock()
	c.gatherTo, c.gathered = 0, nil
	c.mu.Unlock()
	if time.Since(start) > gatherOverslept {
		c.noGatherUntil = time.Now().Add(noGatherAfterOversleep)
	}
}

// gatherWait bounds the writer's wait for the next group (gather).
const gatherWait = 100 * time.Microsecond

// A wait that overslept by a millisecond tells the writer the process
// was idle: Go's timers then wake at the resolution of the poller, a
// millisecond, so waiting would add that to writes arriving a few at a
// time (the workers claiming one new job, say), which gain nothing from
// it. The writer does not wait for a while after one. Under load a wait
// seldom lasts a millisecond.
const (
	gatherOverslept        = 1 * time.Millisecond
	noGatherAfterOversleep = 10 * time.Millisecond
)

// commitNext commits the next group, if any function is queued, and
// returns its size (more is false when none was queued, and the writer is
// then no longer running). It waits
// for the write slot and SQLite's write lock by the rules of the first
// function queued (its context, its view's busy wait), takes the queue,
// runs it as one transaction and answers everyone in it. The group is
// taken only once the transaction holds the lock, so that while the writer
// waits for it (another process holds it) every other caller still waits
// by its own rules (await) and may give up. The transaction runs on wc,
// the writer's connection.
func (c *committer) commitNext(wc *writeConn) (n int, more bool) {
	c.mu.Lock()
	if len(c.pending) == 0 {
		c.running = false
		c.mu.Unlock()
		return 0, false
	}
	first := c.pending[0]
	first.first = true
	c.mu.Unlock()

	s := first.view
	var group []*groupWrite
	committed := false
	// Deferred, so that the callers are answered even if the goroutine
	// ends inside a function (runtime.Goexit).
	defer func() { c.answer(group, committed) }()

	if !s.tryLockWrite() {
		// Another writer of this process holds the slot (a single-statement
		// write, withWriteLock) and may need a connection of the pool: give
		// the kept one back while waiting, or with a pool of one both
		// would wait for ever.
		wc.release()
		if err := s.lockWriteSince(first.ctx, first.queued); err != nil {
			c.failAlone(first, err)
			return 0, true
		}
	}
	defer s.unlockWrite()
	err := wc.runTx(context.WithoutCancel(first.ctx), s, func(tx *sqlx.Tx) error {
		group = c.take()
		return runGroup(tx, group)
	})
	if group == nil {
		// The transaction did not begin (another process's lock outlasted
		// the first caller's busy wait): only that caller has waited its
		// full wait; the others may still get the lock within theirs.
		c.failAlone(first, err)
		return 0, true
	}
	for _, w := range group {
		if w.err == nil {
			w.err = err // nil, or why none of the group's writes committed
		}
	}
	s.room.noteGroup(err, group)
	if err == nil && s.obs != nil {
		s.obs.GroupCommit(len(group))
	}
	committed = true
	return len(group), true
}

// close refuses new writes (ErrClosed) and waits until the writes queued
// before have their outcome: the writer commits them, as it would have,
// and ends when the queue is empty, once it has given back its
// connection, so that the database can then be closed.
func (c *committer) close() {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		c.drained = make(chan struct{})
		if c.writers == 0 {
			close(c.drained)
		}
	}
	drained := c.drained
	c.mu.Unlock()
	<-drained
}

// isClosed reports whether close has begun: the store takes no new write.
func (c *committer) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// failAlone answers w, queued first, with err before any group was taken.
func (c *committer) failAlone(w *groupWrite, err error) {
	// The wait is counted before the caller is answered, so that whoever
	// the answer wakes already sees it (the observer's metrics, tests).
	w.view.observeWait(w)
	c.mu.Lock()
	c.pending = removeWrite(c.pending, w)
	w.err = err
	close(w.wake)
	c.mu.Unlock()
}

// take takes the group from the queue: every function queued, in order,
// up to maxGroup (the first is the one the writer waited for).
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

// answer wakes the group's callers. committed is false when the writer
// goroutine is ending before the group's outcome was settled: the
// functions without an error of their own then get errWriterExited.
func (c *committer) answer(group []*groupWrite, committed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range group {
		if !committed && w.err == nil {
			w.err = errWriterExited
		}
		close(w.wake)
	}
}

// runGroup runs the group's functions in tx and sets each one's err. A
// function alone runs as its own transaction: its error rolls tx back.
// Otherwise each runs inside a savepoint, rolled back if it fails, and a
// function whose caller has given up is not run; runGroup fails (and tx
// is rolled back) only if a savepoint cannot be made, rolled back or
// released, the connection being no longer usable. Writes of one kind
// queued one after the other are first tried together (runTogether).
func runGroup(tx *sqlx.Tx, group []*groupWrite) error {
	if len(group) == 1 {
		w := group[0]
		if w.err = w.ctx.Err(); w.err == nil {
			w.err = marked(w.call(tx))
		}
		return w.err
	}
	for len(group) > 0 {
		run := group[:max(kindRun(group), 1)]
		group = group[len(run):]
		if len(run) >= 2 {
			done, err := runTogether(tx, run)
			if err != nil {
				return err
			}
			if done {
				continue
			}
		}
		for _, w := range run {
			if err := runOne(tx, w); err != nil {
				return err
			}
		}
	}
	return nil
}

// runOne runs w's function inside a savepoint, unless its caller has
// given up.
func runOne(tx *sqlx.Tx, w *groupWrite) error {
	if w.err = w.ctx.Err(); w.err != nil {
		return nil
	}
	err := inSavepoint(tx, func() bool {
		w.err = marked(w.call(tx))
		return w.err == nil
	})
	if err != nil && errors.Is(w.err, locrisk.ErrStorageFull) {
		// SQLite may answer SQLITE_FULL by rolling back the whole
		// transaction, savepoints and all: then the group fails for
		// want of room, and says so.
		return fmt.Errorf("%w: %w", locrisk.ErrStorageFull, err)
	}
	return err
}

// inSavepoint runs fn inside a savepoint and keeps its writes only if it
// returns true. Its error is the savepoint's own: the connection is no
// longer usable.
func inSavepoint(tx *sqlx.Tx, fn func() (keep bool)) error {
	ctx := context.Background()
	if _, err := tx.ExecContext(ctx, `SAVEPOINT write`); err != nil {
		return fmt.Errorf("savepoint: %w", err)
	}
	if !fn() {
		if _, err := tx.ExecContext(ctx, `ROLLBACK TO write`); err != nil {
			return fmt.Errorf("roll back to savepoint: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `RELEASE write`); err != nil {
		return fmt.Errorf("release savepoint: %w", err)
	}
	return nil
}

// kindRun is the number of writes at the head of ws of the first one's
// kind (0 when it has none).
func kindRun(ws []*groupWrite) int {
	if len(ws) == 0 || ws[0].kind == nil {
		return 0
	}
	n := 1
	for n < len(ws) && ws[n].kind == ws[0].kind {
		n++
	}
	return n
}

// runTogether makes the writes ws (consecutive in their group, of one
// kind) with one set of statements (their kind's merge, for job creations
// createJobsTogether) inside one savepoint. That has the outcome of
// running their functions one after the other whenever every one of them
// succeeds, which is what merge checks; when it cannot tell (for job
// creations: a key seen before, a quota it would exceed, an error), it
// undoes its writes and done is false: the caller then runs them all one
// at a time, each to its own outcome (trying the rest of the run together
// again could cost a try per function, as when an account's creations run
// past its quota). Callers that have given up are left out, as runOne
// leaves them.
func runTogether(tx *sqlx.Tx, ws []*groupWrite) (done bool, err error) {
	gaveUp := make([]error, len(ws))
	args := make([]any, 0, len(ws))
	for i, w := range ws {
		if gaveUp[i] = w.ctx.Err(); gaveUp[i] == nil {
			args = append(args, w.arg)
		}
	}
	merge := ws[0].kind.merge
	err = inSavepoint(tx, func() bool {
		done = merge(context.Background(), tx, args)
		return done
	})
	if err != nil || !done {
		return false, err
	}
	for i, w := range ws {
		w.err = gaveUp[i]
	}
	return true, nil
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
