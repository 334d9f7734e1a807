package pgstore

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/locrisk/locrisk"
)

// TestClassify: what PostgreSQL and its connection say maps once to the
// domain's errors, which the API answers 503 (storage_full,
// database_unavailable); what it does not recognise stays as it was; a
// full disk unproves the room.
func TestClassify(t *testing.T) {
	pg := func(code string) error { return fmt.Errorf("insert: %w", &pgconn.PgError{Code: code, Message: "x"}) }
	tests := []struct {
		name string
		err  error
		want error // nil: unchanged
	}{
		{"disk full", pg("53100"), locrisk.ErrStorageFull},
		{"out of memory", pg("53200"), locrisk.ErrUnavailable},
		{"too many connections", pg("53300"), locrisk.ErrUnavailable},
		{"admin shutdown", pg("57P01"), locrisk.ErrUnavailable},
		{"crash shutdown", pg("57P02"), locrisk.ErrUnavailable},
		{"starting up", pg("57P03"), locrisk.ErrUnavailable},
		{"connection failure", pg("08006"), locrisk.ErrUnavailable},
		{"read-only standby", pg("25006"), locrisk.ErrUnavailable},
		{"bad connection", driver.ErrBadConn, locrisk.ErrUnavailable},
		{"refused", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, locrisk.ErrUnavailable},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), locrisk.ErrUnavailable},
		{"cut short", io.ErrUnexpectedEOF, locrisk.ErrUnavailable},
		{"unique violation", pg("23505"), nil},
		{"serialization failure", pg("40001"), nil},
		{"query canceled", pg("57014"), nil},
		{"end of rows", io.EOF, nil},
		{"context", context.Canceled, nil},
		{"skip", driver.ErrSkip, nil},
	}
	for _, tt := range tests {
		r := &room{}
		now := time.Now()
		r.prove(now)
		got := r.classify(tt.err)
		if tt.want == nil {
			if got != tt.err {
				t.Errorf("%s: %v, want it unchanged", tt.name, got)
			}
			continue
		}
		if !errors.Is(got, tt.want) || !errors.Is(got, tt.err) {
			t.Errorf("%s: %v, want %v wrapping the original", tt.name, got, tt.want)
		}
		if full := errors.Is(tt.want, locrisk.ErrStorageFull); r.proven(now) == full {
			t.Errorf("%s: room proven %v after it", tt.name, r.proven(now))
		}
	}
	// database/sql retries a fresh connection on ErrBadConn: the mark
	// must keep it visible.
	if got := (&room{}).classify(driver.ErrBadConn); !errors.Is(got, driver.ErrBadConn) {
		t.Errorf("ErrBadConn hidden: %v", got)
	}
}

// TestClassifyingConnKeepsPgxInterfaces: the wrapper offers every
// optional interface of pgx's connection that database/sql uses, so
// wrapping it loses nothing.
func TestClassifyingConnKeepsPgxInterfaces(t *testing.T) {
	var pgxConn driver.Conn = &stdlib.Conn{}
	var ours driver.Conn = &classifyingConn{Conn: pgxConn}
	for name, is := range map[string]func(any) bool{
		"ConnPrepareContext": implements[driver.ConnPrepareContext],
		"ConnBeginTx":        implements[driver.ConnBeginTx],
		"ExecerContext":      implements[driver.ExecerContext],
		"QueryerContext":     implements[driver.QueryerContext],
		"Pinger":             implements[driver.Pinger],
		"NamedValueChecker":  implements[driver.NamedValueChecker],
		"SessionResetter":    implements[driver.SessionResetter],
		"Validator":          implements[driver.Validator],
	} {
		if is(pgxConn) && !is(ours) {
			t.Errorf("pgx's connection is a %s, the wrapper is not", name)
		}
	}
}

func implements[T any](v any) bool {
	_, ok := v.(T)
	return ok
}

// TestRoomProofExpires: a proof of room holds reproveAfter, since the
// disk is the server's and fills without telling.
func TestRoomProofExpires(t *testing.T) {
	var r room
	now := time.Now()
	if r.proven(now) {
		t.Fatal("proven before any proof")
	}
	r.prove(now)
	if !r.proven(now.Add(reproveAfter - time.Second)) {
		t.Error("a fresh proof does not hold")
	}
	if r.proven(now.Add(reproveAfter)) {
		t.Error("a proof holds past reproveAfter")
	}
	r.unprove()
	if r.proven(now) {
		t.Error("proven after a refused write")
	}
}
