package pgstore

// What PostgreSQL and the connection to it say, mapped once into the
// domain's errors (errors.go at the module root): the store opens its
// database through classifyingConnector, a database/sql connector over
// pgx's that passes every error of every statement, transaction and row
// through classify. So no query of the store can let a full disk or a
// restarting server out as an error the API answers with 500
// (docs/postgres.md, Failures).

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/locrisk/locrisk"
)

// classify returns err marked with the domain error it means, when it
// means one:
//   - locrisk.ErrStorageFull for SQLSTATE 53100 (disk_full), and the
//     store's room is unproven until a probe proves it again (room);
//   - locrisk.ErrUnavailable for a server that cannot be reached, refuses
//     connections, is shutting down or restarting, or is out of
//     resources: SQLSTATE classes 08 (connection exception), 53 (other
//     than 53100), 57P (operator intervention: 57P01 admin shutdown, 57P02
//     crash shutdown, 57P03 cannot connect now), 25006 (a read-only
//     standby), and a connection lost or refused below SQL.
//
// The markers wrap err, so errors.Is still finds driver.ErrBadConn, on
// which database/sql retries a fresh connection. io.EOF (the end of
// rows), driver.ErrSkip and a context's own end are returned as they are.
func (r *room) classify(err error) error {
	if err == nil || err == io.EOF || errors.Is(err, driver.ErrSkip) || errors.Is(err, driver.ErrRemoveArgument) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, locrisk.ErrStorageFull) || errors.Is(err, locrisk.ErrUnavailable) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch code := pe.Code; {
		case code == "53100":
			r.unprove()
			return fmt.Errorf("%w: %w", locrisk.ErrStorageFull, err)
		case strings.HasPrefix(code, "08"), strings.HasPrefix(code, "53"), strings.HasPrefix(code, "57P"), code == "25006":
			return fmt.Errorf("%w: %w", locrisk.ErrUnavailable, err)
		}
		return err
	}
	if connectionLost(err) {
		return fmt.Errorf("%w: %w", locrisk.ErrUnavailable, err)
	}
	return err
}

// connectionLost reports whether err says the connection to the server
// failed, below SQL: refused or reset, closed under a statement, or the
// pool giving up on a bad connection.
func connectionLost(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.Is(err, driver.ErrBadConn) || errors.As(err, &ce) || errors.As(err, &ne) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		strings.Contains(err.Error(), "conn closed")
}

// classifyingConnector opens pgx's connections and wraps each so that its
// errors pass through classify.
type classifyingConnector struct {
	driver.Connector
	room *room
}

func (c classifyingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, c.room.classify(err)
	}
	return &classifyingConn{Conn: cn, room: c.room}, nil
}

// classifyingConn is a connection whose errors are classified. It offers
// the optional interfaces pgx's connection has (checked in
// TestClassifyingConnKeepsPgxInterfaces), forwarding each.
type classifyingConn struct {
	driver.Conn
	room *room
}

var (
	_ driver.ConnPrepareContext = (*classifyingConn)(nil)
	_ driver.ConnBeginTx        = (*classifyingConn)(nil)
	_ driver.ExecerContext      = (*classifyingConn)(nil)
	_ driver.QueryerContext     = (*classifyingConn)(nil)
	_ driver.Pinger             = (*classifyingConn)(nil)
	_ driver.NamedValueChecker  = (*classifyingConn)(nil)
	_ driver.SessionResetter    = (*classifyingConn)(nil)
	_ driver.Validator          = (*classifyingConn)(nil)
)

// pgxConn is the pgx connection under c, for what only pgx offers (a
// pipeline of statements: withPgx).
func (c *classifyingConn) pgxConn() (*stdlib.Conn, bool) {
	dc, ok := c.Conn.(*stdlib.Conn)
	return dc, ok
}

// withPgx runs fn with the pgx connection under conn, for what
// database/sql does not offer, and classifies its error as every other.
func (s *Store) withPgx(conn *sql.Conn, fn func(*stdlib.Conn) error) error {
	err := conn.Raw(func(driverConn any) error {
		var dc *stdlib.Conn
		switch c := driverConn.(type) {
		case *classifyingConn:
			var ok bool
			if dc, ok = c.pgxConn(); !ok {
				return fmt.Errorf("not a pgx connection: %T", c.Conn)
			}
		case *stdlib.Conn:
			dc = c
		default:
			return fmt.Errorf("not a pgx connection: %T", driverConn)
		}
		return fn(dc)
	})
	return s.room.classify(err)
}

func (c *classifyingConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *classifyingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	var st driver.Stmt
	var err error
	if p, ok := c.Conn.(driver.ConnPrepareContext); ok {
		st, err = p.PrepareContext(ctx, query)
	} else {
		st, err = c.Conn.Prepare(query)
	}
	if err != nil {
		return nil, c.room.classify(err)
	}
	return &classifyingStmt{Stmt: st, room: c.room}, nil
}

func (c *classifyingConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *classifyingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	b, ok := c.Conn.(driver.ConnBeginTx)
	if !ok {
		return nil, errors.New("pgstore: the driver's connection cannot begin a transaction with a context")
	}
	tx, err := b.BeginTx(ctx, opts)
	if err != nil {
		return nil, c.room.classify(err)
	}
	return classifyingTx{Tx: tx, room: c.room}, nil
}

func (c *classifyingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, ok := c.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	res, err := e.ExecContext(ctx, query, args)
	return res, c.room.classify(err)
}

func (c *classifyingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := c.Conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	rows, err := q.QueryContext(ctx, query, args)
	if err != nil {
		return nil, c.room.classify(err)
	}
	return &classifyingRows{Rows: rows, room: c.room}, nil
}

func (c *classifyingConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return c.room.classify(p.Ping(ctx))
	}
	return nil
}

func (c *classifyingConn) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := c.Conn.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

// ResetSession and IsValid answer database/sql's pool, which wants
// driver.ErrBadConn itself: their answers are not classified.
func (c *classifyingConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *classifyingConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

type classifyingTx struct {
	driver.Tx
	room *room
}

func (t classifyingTx) Commit() error   { return t.room.classify(t.Tx.Commit()) }
func (t classifyingTx) Rollback() error { return t.room.classify(t.Tx.Rollback()) }

type classifyingStmt struct {
	driver.Stmt
	room *room
}

func (s *classifyingStmt) Close() error { return s.room.classify(s.Stmt.Close()) }

func (s *classifyingStmt) Exec(args []driver.Value) (driver.Result, error) {
	res, err := s.Stmt.Exec(args)
	return res, s.room.classify(err)
}

func (s *classifyingStmt) Query(args []driver.Value) (driver.Rows, error) {
	rows, err := s.Stmt.Query(args)
	if err != nil {
		return nil, s.room.classify(err)
	}
	return &classifyingRows{Rows: rows, room: s.room}, nil
}

func (s *classifyingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	e, ok := s.Stmt.(driver.StmtExecContext)
	if !ok {
		return nil, errors.New("pgstore: the driver's statement has no ExecContext")
	}
	res, err := e.ExecContext(ctx, args)
	return res, s.room.classify(err)
}

func (s *classifyingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	q, ok := s.Stmt.(driver.StmtQueryContext)
	if !ok {
		return nil, errors.New("pgstore: the driver's statement has no QueryContext")
	}
	rows, err := q.QueryContext(ctx, args)
	if err != nil {
		return nil, s.room.classify(err)
	}
	return &classifyingRows{Rows: rows, room: s.room}, nil
}

// classifyingRows classifies an error met while reading rows: a server
// that goes away in the middle of a result.
type classifyingRows struct {
	driver.Rows
	room *room
}

func (r *classifyingRows) Next(dest []driver.Value) error { return r.room.classify(r.Rows.Next(dest)) }
func (r *classifyingRows) Close() error                   { return r.room.classify(r.Rows.Close()) }

func (r *classifyingRows) ColumnTypeDatabaseTypeName(i int) string {
	if c, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return c.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

// room is what the store knows of the database's room to write: when a
// write last proved it (ProbeWrite), zero since the store opened and
// since PostgreSQL last refused a write for a full disk. The disk is the
// server's, which this process cannot measure, so a proof holds for
// reproveAfter only: a disk that fills with no write of ours refused is
// seen within that time.
type room struct {
	provenAt atomic.Int64 // Unix nanoseconds; 0: unproven
}

// reproveAfter is how long a proof of room holds.
const reproveAfter = 10 * time.Second

func (r *room) unprove() { r.provenAt.Store(0) }

func (r *room) prove(now time.Time) { r.provenAt.Store(now.UnixNano()) }

// proven reports whether room was proven within reproveAfter of now.
func (r *room) proven(now time.Time) bool {
	at := r.provenAt.Load()
	return at != 0 && now.Sub(time.Unix(0, at)) < reproveAfter
}
