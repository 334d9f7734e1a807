package storetest

// The page cursor is the API's, not a store's: a client keeps one across a
// restart, or gets it from one node and hands it to another, so every
// store makes and reads the domain's one format (locrisk.EncodeCursor).
// Since this runs against every store, a cursor one store's list makes is
// one the other's accepts, and a cursor a PostgreSQL node handed out in
// the form it used before still pages.

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
)

// cursorFormat: the next cursor of a job list and of an endpoint list is
// locrisk.EncodeCursor of the page's last row, byte for byte; a cursor made
// by the domain, or in the legacy PostgreSQL form, for a listed row gives
// the same page as the store's own; and paging through every page with
// each of them sees every row once, in order.
func cursorFormat(t testing.TB, h Harness) {
	s := h.open(t)
	ctx := context.Background()
	a := newAccount(t, s, 100)
	// Two jobs share a creation time, so the id decides between them.
	for _, d := range []time.Duration{0, time.Second, time.Second, 2*time.Second + 345*time.Millisecond, 3 * time.Second} {
		if _, _, err := s.CreateJob(ctx, apiJob(a.ID), t0.Add(d)); err != nil {
			t.Fatal(err)
		}
	}
	jobPage := func(limit int, cursor string) ([]locrisk.Job, string, error) {
		return s.ListJobs(ctx, a.ID, "", limit, cursor)
	}
	checkCursors(t, "jobs", ids.Job, jobPage, func(j locrisk.Job) (time.Time, string) { return j.CreatedUTC, j.ID })

	for i := range 4 {
		newEndpoint(t, s, a.ID, t0.Add(time.Duration(i/2)*time.Second))
	}
	endpointPage := func(limit int, cursor string) ([]locrisk.WebhookEndpoint, string, error) {
		return s.ListWebhookEndpoints(ctx, a.ID, limit, cursor)
	}
	checkCursors(t, "endpoints", ids.WebhookEndpoint, endpointPage,
		func(e locrisk.WebhookEndpoint) (time.Time, string) { return e.CreatedUTC, e.ID })
}

// legacyCursor is a cursor in the form the PostgreSQL store used to hand
// out: "1", the time in RFC 3339 with nanoseconds, the id.
func legacyCursor(created time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("1\x00" + created.UTC().Format(time.RFC3339Nano) + "\x00" + id))
}

// checkCursors pages a list of at least three rows (list, with ids of
// prefix) two rows at a time with the store's cursors, the domain's and
// the legacy ones, and checks that they are the same and page alike.
func checkCursors[T any](t testing.TB, what, prefix string, list func(limit int, cursor string) ([]T, string, error),
	key func(T) (time.Time, string)) {
	t.Helper()
	validID := func(id string) bool { return ids.HasPrefix(id, prefix) }
	all, next, err := list(1000, "")
	if err != nil || next != "" || len(all) < 3 {
		t.Fatalf("%s: whole list of %d, next %q, %v", what, len(all), next, err)
	}
	var want []string
	for _, r := range all {
		_, id := key(r)
		want = append(want, id)
	}
	for _, form := range []string{"store", "domain", "legacy"} {
		var got []string
		cursor := ""
		for range len(all) + 1 {
			page, next, err := list(2, cursor)
			if err != nil {
				t.Fatalf("%s, %s cursors: page after %q: %v", what, form, cursor, err)
			}
			for _, r := range page {
				_, id := key(r)
				got = append(got, id)
			}
			if next == "" {
				break
			}
			created, id := key(page[len(page)-1])
			if c := locrisk.EncodeCursor(created, id); next != c {
				t.Errorf("%s: next cursor %q, want the domain's %q", what, next, c)
			}
			if gotCreated, gotID, err := locrisk.DecodeCursor(next, validID); err != nil || !gotCreated.Equal(created) || gotID != id {
				t.Errorf("%s: cursor %q decodes to %s %s, %v; want %s %s", what, next, gotCreated, gotID, err, created, id)
			}
			switch form {
			case "store":
				cursor = next
			case "domain":
				cursor = locrisk.EncodeCursor(created, id)
			case "legacy":
				cursor = legacyCursor(created, id)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s, %s cursors: paged\n %v\nwant\n %v", what, form, got, want)
		}
	}
	// A cursor of another list's ids is refused.
	if _, _, err := list(2, locrisk.EncodeCursor(t0, ids.New(ids.Batch))); !errors.Is(err, locrisk.ErrBadCursor) {
		t.Errorf("%s: a batch's cursor: %v, want ErrBadCursor", what, err)
	}
}
