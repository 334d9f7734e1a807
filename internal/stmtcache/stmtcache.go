// Package stmtcache keeps the prepared statements of each database
// connection, so that a query the program runs again and again is parsed
// once per connection instead of on every call.
//
// database/sql hands a query with arguments straight to the driver, and
// the SQLite driver prepares it, runs it and finalises it each time.
// Parsing and planning a statement costs more than running one of this
// service's short indexed statements (the profile behind docs/performance.md,
// Job creation). A Connector from this package wraps the driver's
// connector: each connection keeps the statements it has prepared, keyed
// by their exact text, up to a bound, the least recently used going first.
// Nothing changes for the caller; the cache is invisible but for speed.
//
// A cached statement serves one call at a time. While its rows are open
// (a caller iterating them), the same text on the same connection is
// prepared afresh for that call, as without the cache. A statement whose
// run fails is finalised and dropped, so an error never leaves a
// statement in an unknown state in the cache.
package stmtcache

import (
	"container/list"
	"context"
	"database/sql/driver"
	"fmt"
	"io"
	"reflect"
)

// Connector wraps a driver.Connector whose connections implement the
// context-aware prepare, begin, exec and query, Pinger, SessionResetter
// and Validator (as the SQLite driver's do). Use it with sql.OpenDB.
type Connector struct {
	base driver.Connector
	size int
}

// New returns a Connector keeping at most size statements per
// connection (size < 1 means 1).
func New(base driver.Connector, size int) *Connector {
	return &Connector{base: base, size: max(size, 1)}
}

// Connect opens a connection of the base connector and gives it a cache.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	inner, ok := dc.(innerConn)
	if !ok {
		dc.Close()
		return nil, fmt.Errorf("stmtcache: the driver's connection %T lacks an interface the cache passes through", dc)
	}
	return &conn{innerConn: inner, size: c.size, byText: map[string]*list.Element{}, lru: list.New()}, nil
}

// Driver returns the base connector's driver.
func (c *Connector) Driver() driver.Driver { return c.base.Driver() }

// innerConn is what the cache needs of the driver's connection.
type innerConn interface {
	driver.Conn
	driver.ConnPrepareContext
	driver.ConnBeginTx
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// conn is a driver connection with its statements. database/sql uses a
// connection from one goroutine at a time, so conn needs no lock.
type conn struct {
	innerConn
	size   int
	byText map[string]*list.Element // of *entry, in lru
	lru    *list.List               // front: most recently used
}

// entry is one cached statement.
type entry struct {
	text  string
	stmt  driver.Stmt
	inUse bool // its rows are open
}

// statement returns the cached statement for text, preparing and caching
// it if needed; nil (and no error) when the cached one is in use.
func (c *conn) statement(ctx context.Context, text string) (*entry, error) {
	if el, ok := c.byText[text]; ok {
		e := el.Value.(*entry)
		if e.inUse {
			return nil, nil
		}
		c.lru.MoveToFront(el)
		return e, nil
	}
	st, err := c.innerConn.PrepareContext(ctx, text)
	if err != nil {
		return nil, err
	}
	if _, ok := st.(driver.StmtExecContext); !ok {
		st.Close()
		return nil, fmt.Errorf("stmtcache: the driver's statement %T lacks context-aware exec", st)
	}
	if _, ok := st.(driver.StmtQueryContext); !ok {
		st.Close()
		return nil, fmt.Errorf("stmtcache: the driver's statement %T lacks context-aware query", st)
	}
	e := &entry{text: text, stmt: st}
	c.byText[text] = c.lru.PushFront(e)
	c.evict()
	return e, nil
}

// evict finalises the least recently used statements not in use until
// the cache is within its size.
func (c *conn) evict() {
	for el := c.lru.Back(); el != nil && c.lru.Len() > c.size; {
		prev := el.Prev()
		if e := el.Value.(*entry); !e.inUse {
			c.drop(el)
		}
		el = prev
	}
}

// drop finalises a statement and forgets it.
func (c *conn) drop(el *list.Element) {
	e := el.Value.(*entry)
	c.lru.Remove(el)
	delete(c.byText, e.text)
	// A failure to finalise leaves nothing to do: the statement is gone
	// from the cache either way, and the connection reports its own state
	// on the next call.
	_ = e.stmt.Close()
}

// forget drops e if it is still the cached statement for its text.
func (c *conn) forget(e *entry) {
	if el, ok := c.byText[e.text]; ok && el.Value.(*entry) == e {
		c.drop(el)
	}
}

// ExecContext runs query through its cached statement.
func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	e, err := c.statement(ctx, query)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return c.innerConn.ExecContext(ctx, query, args)
	}
	res, err := e.stmt.(driver.StmtExecContext).ExecContext(ctx, args)
	if err != nil {
		c.forget(e)
	}
	return res, err
}

// QueryContext runs query through its cached statement; the statement is
// in use until the rows are closed.
func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	e, err := c.statement(ctx, query)
	if err != nil {
		return nil, err
	}
	if e == nil {
		return c.innerConn.QueryContext(ctx, query, args)
	}
	r, err := e.stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		c.forget(e)
		return nil, err
	}
	e.inUse = true
	return &rows{Rows: r, conn: c, entry: e}, nil
}

// Close finalises the cached statements, then closes the connection.
func (c *conn) Close() error {
	for el := c.lru.Front(); el != nil; el = c.lru.Front() {
		c.drop(el)
	}
	return c.innerConn.Close()
}

// BeginTx, Ping, ResetSession and IsValid pass through to the driver's
// connection; database/sql finds them by type assertion, so the wrapper
// must declare them.

func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.innerConn.BeginTx(ctx, opts)
}

func (c *conn) Ping(ctx context.Context) error { return c.innerConn.Ping(ctx) }

func (c *conn) ResetSession(ctx context.Context) error { return c.innerConn.ResetSession(ctx) }

func (c *conn) IsValid() bool { return c.innerConn.IsValid() }

// rows gives its statement back to the cache when closed. The column type
// methods pass through, so database/sql's ColumnTypes sees the driver's.
type rows struct {
	driver.Rows
	conn   *conn
	entry  *entry
	failed bool // a step failed: the statement is dropped at Close
	closed bool
}

func (r *rows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.entry.inUse = false
	err := r.Rows.Close()
	if err != nil || r.failed {
		r.conn.forget(r.entry)
	}
	r.conn.evict()
	return err
}

func (r *rows) Next(dest []driver.Value) error {
	err := r.Rows.Next(dest)
	if err != nil && err != io.EOF {
		r.failed = true
	}
	return err
}

func (r *rows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *rows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}

func (r *rows) ColumnTypeLength(i int) (int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeLength); ok {
		return t.ColumnTypeLength(i)
	}
	return 0, false
}

func (r *rows) ColumnTypeNullable(i int) (nullable, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(i)
	}
	return false, false
}

func (r *rows) ColumnTypePrecisionScale(i int) (precision, scale int64, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return t.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}
