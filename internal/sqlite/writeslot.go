package sqlite

// The in-process write slot (see the package comment): this process's
// writers ask SQLite for the write lock one at a time, and a write that
// waits for the slot tells apart this process's own writers (ErrWriteQueue)
// from a holder stuck on another process's lock (ErrBusy): WithBusyWait.

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/locrisk/locrisk"
)

// DefaultBusyWait is how long a write waits for another process's write
// lock (SQLite's busy timeout) before it fails with ErrBusy, unless the
// store was derived with WithBusyWait.
const DefaultBusyWait = 5 * time.Second

// DefaultQueueWait bounds how long a write of a view with a busy wait
// (WithBusyWait) queues behind this process's own writers before it fails
// with ErrWriteQueue. Each writer ahead holds the slot for milliseconds, so
// this is reached only under a flood of writes far beyond the load check
// of docs/operations.md (Limits and defaults), whose slowest job creation waits
// about a second. A writer held up by another process's lock is told
// apart and answered after the busy wait instead (see writeSlot).
const DefaultQueueWait = 15 * time.Second

// foreignAfter is how long the slot's holder must have waited for SQLite's
// write lock before the writers queued behind it take it to be held up by
// another process. Inside the process the slot already serialises
// writers, so SQLite makes the holder wait only for another process's
// lock; the margin covers a holder that is merely slow (a single-statement
// write counts whole, see withWriteLock, and a loaded machine stretches
// everything).
const foreignAfter = 250 * time.Millisecond

// queuePoll is how often a writer that has waited its busy wait checks
// whether the holder of the slot is held up by another process.
const queuePoll = 20 * time.Millisecond

// writeSlot is the in-process write slot, shared by a store and its views.
// Waiting for it has two causes that callers must tell apart: this
// process's own writers, each holding it for milliseconds (server load),
// and a holder stuck waiting for another process's lock (the database is
// busy). The holder records when it started waiting for SQLite's lock, so
// that the writers queued behind it can tell which it is.
type writeSlot struct {
	ch chan struct{}
	// lockWaitSince is the time (UnixNano) at which the holder asked
	// SQLite for the write lock and has not had its answer yet; 0 when
	// it is not asking.
	lockWaitSince atomic.Int64
}

// heldUp reports whether the slot's holder has been waiting for SQLite's
// write lock for at least after, at now.
func (w *writeSlot) heldUp(now time.Time, after time.Duration) bool {
	since := w.lockWaitSince.Load()
	return since != 0 && now.Sub(time.Unix(0, since)) >= after
}

// askLock brackets the holder's request for SQLite's write lock: call it
// before, and the function it returns after.
func (w *writeSlot) askLock() (done func()) {
	w.lockWaitSince.Store(time.Now().UnixNano())
	return func() { w.lockWaitSince.Store(0) }
}

// WithBusyWait returns a view of the store whose transactions (WithTx)
// wait at most d for another process's lock before failing with ErrBusy;
// single-statement writes keep DefaultBusyWait for the lock. The wait
// counts in SQLite and, for a write queued for the in-process write slot,
// behind a holder that is itself held up by another process's lock. Behind
// this process's own writers the view waits longer, up to its queue wait
// (DefaultQueueWait, or WithQueueWait), then fails with ErrWriteQueue. The
// server's request handlers use one so that a client hears 503 promptly
// rather than after DefaultBusyWait (docs/api.md, database_busy and
// server_busy). The view shares the database, the write slot and the
// hooks with s; closing either closes both.
func (s *Store) WithBusyWait(d time.Duration) *Store {
	v := *s
	v.busyWait = d
	return &v
}

// WithQueueWait returns a view of the store whose writes, when it has a
// busy wait (WithBusyWait), queue at most d behind this process's own
// writers; see WithBusyWait. A d below the busy wait counts as the busy
// wait.
func (s *Store) WithQueueWait(d time.Duration) *Store {
	v := *s
	v.queueWait = d
	return &v
}

// lockWrite waits for the in-process write slot, or for ctx. On a view
// with a busy wait it gives up, once it has waited that long, as soon as
// the holder of the slot is held up by another process's lock (ErrBusy:
// the holder, and everyone behind it, would wait the lock out), and
// otherwise after the queue wait (ErrWriteQueue: this process's own
// writers are too many).
func (s *Store) lockWrite(ctx context.Context) error {
	start := time.Now()
	if s.obs != nil {
		defer func() { s.obs.WriteWait(time.Since(start)) }()
	}
	return s.lockWriteSince(ctx, start)
}

// lockWriteSince is lockWrite for a write that began waiting at start
// (queued for a group commit), which counts towards its waits.
func (s *Store) lockWriteSince(ctx context.Context, start time.Time) error {
	if s.busyWait <= 0 {
		select {
		case s.slot.ch <- struct{}{}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	t := time.NewTimer(s.firstWaitCheck(start))
	defer t.Stop()
	for {
		select {
		case s.slot.ch <- struct{}{}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case now := <-t.C:
			next, err := s.waitedTooLong(now, start)
			if err != nil {
				return err
			}
			t.Reset(next)
		}
	}
}

// firstWaitCheck is how long after start a write on a view with a busy
// wait first checks whether to give up waiting (waitedTooLong): not before
// the busy wait is over, since a writer held up by another process may
// get the lock within it, as a write outside the queue would.
func (s *Store) firstWaitCheck(start time.Time) time.Duration {
	return max(s.busyWait-time.Since(start), 0)
}

// waitedTooLong decides, at now, for a write on a view with a busy wait
// that began waiting at start and has waited its busy wait: ErrBusy when
// the slot's holder has been held up by another process's lock, which
// everyone behind it would wait out too; ErrWriteQueue past the queue
// wait (this process's own writers are too many); otherwise nil and when
// to check again.
func (s *Store) waitedTooLong(now, start time.Time) (next time.Duration, err error) {
	queueWait := s.queueWait
	if queueWait <= 0 {
		queueWait = DefaultQueueWait
	}
	queueWait = max(queueWait, s.busyWait)
	// A holder that is a view like this one gives up on the lock after
	// its busy wait, so with a busy wait shorter than foreignAfter (tests)
	// it must still be seen held up.
	heldUpAfter := min(foreignAfter, s.busyWait/2)
	if s.slot.heldUp(now, heldUpAfter) {
		return 0, fmt.Errorf("%w: the writer ahead has waited for another process's lock for %s or more, and this write waited %s",
			locrisk.ErrBusy, heldUpAfter, now.Sub(start).Round(time.Millisecond))
	}
	if now.Sub(start) >= queueWait {
		return 0, fmt.Errorf("%w: no write slot within %s", locrisk.ErrWriteQueue, queueWait)
	}
	return min(queuePoll, queueWait-now.Sub(start)), nil
}

func (s *Store) unlockWrite() { <-s.slot.ch }

// tryLockWrite takes the write slot if it is free, without waiting.
func (s *Store) tryLockWrite() bool {
	select {
	case s.slot.ch <- struct{}{}:
		return true
	default:
		return false
	}
}

// withWriteLock runs a single-statement write (an autocommit UPDATE or
// INSERT) in the write slot. The whole statement counts as asking SQLite
// for the lock (writeSlot), since it waits for the lock inside; such
// writes are short, and foreignAfter leaves them room.
func (s *Store) withWriteLock(ctx context.Context, fn func() error) (err error) {
	defer s.observeBusy(&err)
	if err := s.lockWrite(ctx); err != nil {
		return err
	}
	defer s.unlockWrite()
	if s.group.isClosed() {
		return locrisk.ErrClosed
	}
	done := s.slot.askLock()
	defer done()
	err = marked(fn())
	s.room.noteWrite(err == nil, err)
	return err
}

// observeWait tells the observer how long w waited in the group queue,
// when it was taken into a group or gave up.
func (s *Store) observeWait(w *groupWrite) {
	if s.obs != nil {
		s.obs.WriteWait(time.Since(w.queued))
	}
}

// observeBusy tells the observer of a write that ended with *err marked
// ErrBusy; deferred by the writers.
func (s *Store) observeBusy(err *error) {
	if s.obs != nil && *err != nil && errors.Is(*err, locrisk.ErrBusy) {
		s.obs.WriteBusy()
	}
}
