package sqlrow

import (
	"database/sql"
	"errors"
	"strconv"
	"testing"

	"github.com/locrisk/locrisk"
)

func TestGot(t *testing.T) {
	boom := errors.New("disk I/O error")
	for _, tc := range []struct {
		err      error
		notFound bool
		want     string
	}{
		{nil, false, ""},
		{sql.ErrNoRows, true, "account acct_1: not found"},
		{boom, false, "read account acct_1: disk I/O error"},
	} {
		got := Got(tc.err, "account acct_1")
		if tc.err == nil {
			if got != nil {
				t.Errorf("Got(nil) = %v", got)
			}
			continue
		}
		if errors.Is(got, locrisk.ErrNotFound) != tc.notFound || got.Error() != tc.want {
			t.Errorf("Got(%v) = %q (not found %v), want %q (not found %v)", tc.err, got, errors.Is(got, locrisk.ErrNotFound), tc.want, tc.notFound)
		}
		if tc.err == boom && !errors.Is(got, boom) {
			t.Errorf("Got(%v) does not wrap it", tc.err)
		}
	}
}

func TestMap(t *testing.T) {
	got, err := Map([]string{"1", "2", "3"}, strconv.Atoi)
	if err != nil || len(got) != 3 || got[0] != 1 || got[2] != 3 {
		t.Fatalf("Map = %v, %v", got, err)
	}
	if got, err := Map([]string{"1", "x"}, strconv.Atoi); err == nil || got != nil {
		t.Fatalf("Map with a bad row = %v, %v; want its error and no values", got, err)
	}
	if got, err := Map([]string{}, strconv.Atoi); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("Map of no rows = %#v, %v; want an empty, non-nil slice", got, err)
	}
}
