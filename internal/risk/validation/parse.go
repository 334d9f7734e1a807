package validation

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/locrisk/locrisk/internal/risk"
)

// ParseError is a line of a table that cannot be read, or a check that
// names a place the table does not list.
type ParseError struct {
	File string
	Line int
	Err  error
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }

func (e *ParseError) Unwrap() error { return e.Err }

// Parse reads a validation table in the format table.tsv's header
// describes: one place or check a line, fields separated by tabs, # for a
// comment. name (the file's) and the line number start every error. Every
// module and peril must be the registry's, every place a check names must
// be listed, and no place may be listed twice.
func Parse(r io.Reader, name string) (*Table, error) {
	t := &Table{}
	placeLine := map[string]int{}
	type ref struct {
		line  int
		kind  string
		place string
	}
	var refs []ref
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	line := 0
	fail := func(format string, args ...any) error {
		return &ParseError{File: name, Line: line, Err: fmt.Errorf(format, args...)}
	}
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		all := fields(text)
		kind, f := all[0], all[1:]
		switch kind {
		case "place":
			p, err := parsePlace(f)
			if err != nil {
				return nil, fail("place: %w", err)
			}
			if first, dup := placeLine[p.Name]; dup {
				return nil, fail("place %q is listed twice (first on line %d)", p.Name, first)
			}
			placeLine[p.Name] = line
			t.Places = append(t.Places, p)
		case "order":
			o, err := parseOrder(f)
			if err != nil {
				return nil, fail("order: %w", err)
			}
			refs = append(refs, ref{line, kind, o.Higher}, ref{line, kind, o.Lower})
			t.Orders = append(t.Orders, o)
		case "low":
			lo, err := parseLow(f)
			if err != nil {
				return nil, fail("low: %w", err)
			}
			refs = append(refs, ref{line, kind, lo.Place})
			t.Lows = append(t.Lows, lo)
		case "priority":
			p, err := parsePriority(f)
			if err != nil {
				return nil, fail("priority: %w", err)
			}
			refs = append(refs, ref{line, kind, p.Place})
			t.Priorities = append(t.Priorities, p)
		default:
			if first, _, _ := strings.Cut(kind, " "); knownKind(first) {
				return nil, fail("%s: fields are separated by tabs, not spaces", first)
			}
			return nil, fail("unknown line kind %q: want place, order, low or priority", kind)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, r := range refs {
		if _, ok := placeLine[r.place]; !ok {
			line = r.line
			return nil, fail("%s: place %q is not listed", r.kind, r.place)
		}
	}
	return t, nil
}

func knownKind(kind string) bool {
	switch kind {
	case "place", "order", "low", "priority":
		return true
	}
	return false
}

// fields splits a line at its tabs, each field trimmed of spaces; a run of
// tabs separates like one, so columns may be aligned.
func fields(line string) []string {
	var out []string
	for _, f := range strings.Split(line, "\t") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// fieldCount checks a line has from min to max fields after its kind.
func fieldCount(f []string, min, max int, want string) error {
	if len(f) < min || len(f) > max {
		return fmt.Errorf("%d fields after the kind, want %s", len(f), want)
	}
	return nil
}

func parsePlace(f []string) (Place, error) {
	if err := fieldCount(f, 4, 4, "NAME, LAT, LON and COUNTY"); err != nil {
		return Place{}, err
	}
	p := Place{Name: f[0], County: f[3]}
	var err error
	if p.Lat, err = coordinate(f[1], "latitude", 90); err != nil {
		return p, fmt.Errorf("%s: %w", p.Name, err)
	}
	if p.Lon, err = coordinate(f[2], "longitude", 180); err != nil {
		return p, fmt.Errorf("%s: %w", p.Name, err)
	}
	if len(p.County) != 5 || strings.Trim(p.County, "0123456789") != "" {
		return p, fmt.Errorf("%s: county %q is not a 5-digit FIPS code", p.Name, p.County)
	}
	return p, nil
}

// coordinate reads decimal degrees within ±limit.
func coordinate(s, what string, limit float64) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.Abs(v) > limit {
		return 0, fmt.Errorf("%s %q is not a number of degrees within ±%g", what, s, limit)
	}
	return v, nil
}

func parseOrder(f []string) (Order, error) {
	if err := fieldCount(f, 4, 5, "MODULE[/PERIL], HIGHER, LOWER, WHY and an optional gap"); err != nil {
		return Order{}, err
	}
	module, peril, err := scope(f[0])
	if err != nil {
		return Order{}, err
	}
	o := Order{Module: module, Peril: peril, Higher: f[1], Lower: f[2], Why: f[3]}
	if o.Gap, err = gap(f, 4); err != nil {
		return o, err
	}
	if o.Higher == o.Lower {
		return o, fmt.Errorf("%s is ordered against itself", o.Higher)
	}
	return o, nil
}

func parseLow(f []string) (Low, error) {
	if err := fieldCount(f, 4, 5, "MODULE[/PERIL], PLACE, MAX, WHY and an optional gap"); err != nil {
		return Low{}, err
	}
	module, peril, err := scope(f[0])
	if err != nil {
		return Low{}, err
	}
	lo := Low{Module: module, Peril: peril, Place: f[1], Why: f[3]}
	if lo.Gap, err = gap(f, 4); err != nil {
		return lo, err
	}
	// A score is 0..100 and must be below MAX: 1 to 100 can be met.
	if lo.Max, err = strconv.Atoi(f[2]); err != nil || lo.Max < 1 || lo.Max > 100 {
		return lo, fmt.Errorf("%s: MAX %q is not a whole score from 1 to 100", lo.Place, f[2])
	}
	return lo, nil
}

func parsePriority(f []string) (Priority, error) {
	if err := fieldCount(f, 4, 5, "MODULE, PLACE, high or not high, WHY and an optional gap"); err != nil {
		return Priority{}, err
	}
	module, peril, err := scope(f[0])
	if err != nil {
		return Priority{}, err
	}
	if peril != "" {
		return Priority{}, fmt.Errorf("%q: a priority is a module's, not a peril's", f[0])
	}
	p := Priority{Module: module, Place: f[1], Why: f[3]}
	if p.Gap, err = gap(f, 4); err != nil {
		return p, err
	}
	switch f[2] {
	case "high":
		p.High = true
	case "not high":
	default:
		return p, fmt.Errorf("%s: %q is neither high nor not high", p.Place, f[2])
	}
	return p, nil
}

// scope reads MODULE or MODULE/PERIL, which must be the registry's keys.
func scope(s string) (module, peril string, err error) {
	module, peril, _ = strings.Cut(s, "/")
	spec, ok := risk.ModuleByKey(module)
	if !ok {
		return "", "", fmt.Errorf("unknown module %q (want one of %s)", module, strings.Join(risk.ModuleKeys(), ", "))
	}
	if peril == "" && strings.Contains(s, "/") {
		return "", "", errors.New(s + ": empty peril after the slash")
	}
	if peril != "" {
		var keys []string
		for _, p := range spec.Perils {
			if p.Key == peril {
				return module, peril, nil
			}
			keys = append(keys, p.Key)
		}
		return "", "", fmt.Errorf("module %s has no peril %q (want one of %s)", module, peril, strings.Join(keys, ", "))
	}
	return module, "", nil
}

// gap reads the optional field i, "gap: " and why the check is a known
// gap; "" where the line stops before it.
func gap(f []string, i int) (string, error) {
	if i >= len(f) {
		return "", nil
	}
	why, ok := strings.CutPrefix(f[i], "gap:")
	if why = strings.TrimSpace(why); !ok || why == "" {
		return "", fmt.Errorf("%q after WHY: only a known gap may follow, written \"gap: \" and why", f[i])
	}
	return why, nil
}
