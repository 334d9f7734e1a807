package sqlite

// Write transactions: WithTx queues its function for the next group commit
// (group.go); the group runs on the writer's connection (writeConn) in one
// BEGIN IMMEDIATE transaction (inTx).

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/locrisk/locrisk"
)

// WithTx runs fn in one write transaction (BEGIN IMMEDIATE) and returns
// fn's error unchanged (so sentinel errors survive) once that transaction
// has committed, or rolled back fn's writes if it failed. The transaction
// is shared with the functions of concurrent callers, which commit
// together (group.go); fn's writes are its own all the same: they commit
// only if fn returns nil, and another function's failure does not undo
// them.
//
// fn runs on the group's writer goroutine (group.go), after the functions
// queued before it. Its ctx is the caller's context without the cancellation: use
// it, not the caller's, for the statements, because SQLite answers a write
// statement interrupted inside a transaction by rolling back the whole
// transaction, the other callers' writes with it. A caller that gives up
// before its turn is not run at all. fn must do nothing but database work
// on tx, and leave anything that must follow the commit (notifying
// workers, answering) to after WithTx returns.
func (s *Store) WithTx(ctx context.Context, fn func(ctx context.Context, tx *sqlx.Tx) error) error {
	return s.withTx(ctx, nil, nil, fn)
}

// withTx is WithTx for a write of a kind (nil: any other write) that the
// group may make together with the writes of that kind beside it, passing
// arg to kind.merge, instead of calling fn (group.go, runTogether).
func (s *Store) withTx(ctx context.Context, kind *writeKind, arg any, fn func(ctx context.Context, tx *sqlx.Tx) error) (err error) {
	defer s.observeBusy(&err)
	return s.groupTx(ctx, kind, arg, fn)
}

// txOps are the store's steps inside an open write transaction that the
// domain sequences itself (locrisk.TxOps): a job's final transition,
// through which locrisk.FinishJob runs the OnJobFinal hooks, a retry and
// the webhook operations. Each method is one step's SQL.
type txOps struct{ tx *sqlx.Tx }

// transactor runs the domain's operations of several steps in one write
// transaction each (locrisk.Transactor). The steps get WithTx's context,
// not the caller's: see WithTx.
type transactor struct{ s *Store }

func (t transactor) InTx(ctx context.Context, fn func(ctx context.Context, ops locrisk.TxOps) error) error {
	return t.s.WithTx(ctx, func(ctx context.Context, tx *sqlx.Tx) error { return fn(ctx, txOps{tx}) })
}

// writeConn is the connection the writer goroutine runs its groups on
// (group.go), kept from one group to the next while the writer runs, with
// the busy timeout it has now. SQLite's busy timeout belongs to the
// connection and a group waits for the lock by its first caller's view, so
// the timeout is set only when that view's wait differs from the last
// group's: under a steady load of requests, whose views share one wait,
// hardly ever. The connection is not kept when the pool has only one
// (keep false): readers need it between groups.
type writeConn struct {
	keep bool
	conn *sqlx.Conn
	busy time.Duration // the busy timeout conn has
}

// runTx runs fn in one transaction on the write connection, while the
// caller holds the write slot, with s's busy wait as its busy timeout.
// When the transaction itself fails (its BEGIN or COMMIT, not fn), the
// connection goes back to the pool (release), so that one in a bad state
// is not kept.
func (wc *writeConn) runTx(ctx context.Context, s *Store, fn func(tx *sqlx.Tx) error) error {
	if wc.conn == nil {
		conn, err := s.db.Connx(ctx)
		if err != nil {
			return fmt.Errorf("begin transaction: %w", err)
		}
		wc.conn, wc.busy = conn, DefaultBusyWait
	}
	want := DefaultBusyWait
	if s.busyWait > 0 {
		want = s.busyWait
	}
	if want != wc.busy {
		if err := setBusyTimeout(ctx, wc.conn, want); err != nil {
			wc.release()
			return err
		}
		wc.busy = want
	}
	fnFailed := false
	err := inTx(ctx, s.slot, wc.conn, func(tx *sqlx.Tx) error {
		err := fn(tx)
		fnFailed = err != nil
		return err
	})
	if err != nil && !fnFailed {
		wc.release()
	}
	return err
}

// release puts the default busy timeout back and returns the connection
// to the pool, for anyone else to use.
func (wc *writeConn) release() {
	if wc.conn == nil {
		return
	}
	if wc.busy != DefaultBusyWait {
		_ = setBusyTimeout(context.Background(), wc.conn, DefaultBusyWait)
	}
	_ = wc.conn.Close()
	wc.conn = nil
}

// setBusyTimeout sets SQLite's busy timeout of one connection.
func setBusyTimeout(ctx context.Context, conn *sqlx.Conn, d time.Duration) error {
	// PRAGMA takes no bind parameters; the value is a number.
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", d.Milliseconds())); err != nil {
		return fmt.Errorf("set busy timeout: %w", err)
	}
	return nil
}

// inTx is WithTx after the write slot: begin on db (the pool or one
// connection), run fn, commit or roll back. SQLITE_BUSY and SQLITE_LOCKED
// come back marked with ErrBusy, SQLITE_FULL with ErrStorageFull. The BEGIN (IMMEDIATE, so it takes the
// write lock) is bracketed in slot for the writers queued behind
// (writeSlot).
func inTx(ctx context.Context, slot *writeSlot, db interface {
	BeginTxx(context.Context, *sql.TxOptions) (*sqlx.Tx, error)
}, fn func(tx *sqlx.Tx) error) error {
	done := slot.askLock()
	tx, err := db.BeginTxx(ctx, nil)
	done()
	if err != nil {
		return fmt.Errorf("begin transaction: %w", marked(err))
	}
	// Rolls back if fn never returns (runtime.Goexit); after the commit or
	// the rollback below it does nothing.
	defer func() { _ = tx.Rollback() }()
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return marked(err)
	}
	if err := tx.Commit(); err != nil {
		// SQLite rolls the whole transaction back when its commit fails
		// for want of room (SQLITE_FULL: the WAL cannot grow), so no write
		// of the group is kept and none is acknowledged.
		return fmt.Errorf("commit: %w", marked(err))
	}
	return nil
}
