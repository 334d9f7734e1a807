package pgstore

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/sqlite"
)

// TestCursorAcrossStores: a cursor one store's list hands out is one the
// other store reads, in both directions, and it pages the same: the rows
// after its position. A client that moves from one kind of node to the
// other (a migration from SQLite to PostgreSQL, say) keeps its place.
func TestCursorAcrossStores(t *testing.T) {
	server := serverDSN(t)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	now := func() time.Time { return t0 }
	pg := openFresh(t, server, Options{Now: now})
	lite, err := sqlite.OpenWith(ctx, filepath.Join(t.TempDir(), "cursor.db"), sqlite.Options{Now: now, Secrets: testSecrets(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })
	stores := map[string]locrisk.Store{"sqlite": lite, "postgres": pg}
	accounts := map[string]string{}
	for name, s := range stores {
		a, err := s.CreateAccount(ctx, "cursor", 100, 600)
		if err != nil {
			t.Fatal(err)
		}
		accounts[name] = a.ID
		for i := range 6 {
			if _, _, err := s.CreateJob(ctx, locrisk.NewJob{AccountID: a.ID, Latitude: 1, Longitude: 2},
				t0.Add(time.Duration(i)*1500*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for from, to := range map[string]string{"sqlite": "postgres", "postgres": "sqlite"} {
		first, cursor, err := stores[from].ListJobs(ctx, accounts[from], "", 3, "")
		if err != nil || cursor == "" {
			t.Fatalf("%s: first page: next %q, %v", from, cursor, err)
		}
		page, _, err := stores[to].ListJobs(ctx, accounts[to], "", 10, cursor)
		if err != nil {
			t.Fatalf("%s's cursor on %s: %v", from, to, err)
		}
		// The position is the last row of the first page; the other
		// store's jobs after it, newest first, are those before it by
		// (creation time, id).
		last := first[len(first)-1]
		all, _, err := stores[to].ListJobs(ctx, accounts[to], "", 10, "")
		if err != nil {
			t.Fatal(err)
		}
		var want, got []string
		for _, j := range all {
			if j.CreatedUTC.Before(last.CreatedUTC) || j.CreatedUTC.Equal(last.CreatedUTC) && j.ID < last.ID {
				want = append(want, j.ID)
			}
		}
		for _, j := range page {
			got = append(got, j.ID)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s's cursor on %s: %v, want %v", from, to, got, want)
		}
	}
}
