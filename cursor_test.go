package locrisk

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

// The one cursor format: a round trip, the legacy PostgreSQL form still
// read, and every malformed or foreign cursor refused.
func TestCursor(t *testing.T) {
	isJob := func(id string) bool { return strings.HasPrefix(id, "job_") && len(id) > len("job_") }
	at := time.Date(2026, 11, 22, 10, 0, 0, 123e6, time.UTC)
	const id = "job_0123456789abcdefghijKLMN"
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	c := EncodeCursor(at.In(time.FixedZone("x", 3600)), id)
	if c != enc("v1\x002026-11-22T10:00:00.123Z\x00"+id) {
		t.Errorf("cursor %q is not the SQLite store's form", c)
	}
	for _, good := range []string{c, enc("1\x00" + at.Format(time.RFC3339Nano) + "\x00" + id)} {
		created, gotID, err := DecodeCursor(good, isJob)
		if err != nil || !created.Equal(at) || created.Location() != time.UTC || gotID != id {
			t.Errorf("%q: %s %s %v", good, created, gotID, err)
		}
	}
	for _, bad := range []string{"", "!!!", c + "=", enc("v1\x002026-11-22T10:00:00.123Z"),
		enc("v2\x002026-11-22T10:00:00.123Z\x00" + id), enc("v1\x002026-11-22\x00" + id),
		enc("v1\x002026-11-22T10:00:00.12Z\x00" + id), enc("1\x0022 Nov 2026\x00" + id),
		enc("v1\x002026-11-22T10:00:00.123Z\x00bat_0123456789abcdefghijKLMN")} {
		if _, _, err := DecodeCursor(bad, isJob); !errors.Is(err, ErrBadCursor) {
			t.Errorf("%q: %v, want ErrBadCursor", bad, err)
		}
	}
	p, err := NewPage(0, "", isJob)
	if err != nil || p.Limit != DefaultPageLimit || !p.First() || p.Fetch() != DefaultPageLimit+1 {
		t.Errorf("first page %+v, %v", p, err)
	}
	if p, _ := NewPage(5000, c, isJob); p.Limit != MaxPageLimit || p.First() || p.AfterID != id {
		t.Errorf("capped page %+v", p)
	}
	rows, next := PageRows(Page{Limit: 2}, []int{1, 2, 3}, func(i int) (time.Time, string) { return at, id })
	if len(rows) != 2 || next != c {
		t.Errorf("page rows %v, next %q", rows, next)
	}
	if _, next := PageRows(Page{Limit: 3}, []int{1, 2, 3}, nil); next != "" {
		t.Errorf("last page has next %q", next)
	}
}

// The usage window: its bounds, and the history it fills with zeros.
func TestUsageWindow(t *testing.T) {
	if _, err := NewUsageWindow(time.Now(), 0, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("no days: %v", err)
	}
	if _, err := NewUsageWindow(time.Now(), 1, []string{BucketAPI, "gold"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown bucket: %v", err)
	}
	w, err := NewUsageWindow(time.Date(2026, 11, 22, 23, 30, 0, 0, time.FixedZone("x", -3600)), 2, []string{BucketBulk, BucketAPI})
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	if !w.From.Equal(day) || !w.To().Equal(day.AddDate(0, 0, 2)) {
		t.Errorf("window [%s, %s)", w.From, w.To())
	}
	got := w.Fill([]DailyUsage{{Day: day.Add(5 * time.Hour), Bucket: BucketAPI, ReportJobs: 3},
		{Day: day.AddDate(0, 0, 1), Bucket: BucketManual, ReportJobs: 9}})
	want := []DailyUsage{{Day: day, Bucket: BucketBulk}, {Day: day, Bucket: BucketAPI, ReportJobs: 3},
		{Day: day.AddDate(0, 0, 1), Bucket: BucketBulk}, {Day: day.AddDate(0, 0, 1), Bucket: BucketAPI}}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for i := range want {
		if !got[i].Day.Equal(want[i].Day) || got[i].Bucket != want[i].Bucket || got[i].ReportJobs != want[i].ReportJobs {
			t.Errorf("entry %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
