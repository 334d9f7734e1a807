// Package validation is the risk engine's validation table
// (docs/methodology.md, "Validation"): well-known US places, orderings
// between them that a hazard scientist would not doubt, places where a
// module or peril must stay low, and reports that must or must not give a
// module's action at high priority. The table is data, table.tsv, embedded
// in the binary so that `locrisk data validate` can run it anywhere; Parse
// reads it and Run checks it against a loaded engine.
//
// The package imports internal/risk and is imported by nothing in it: the
// engine does not know its own validation.
package validation

import (
	_ "embed"
	"fmt"
	"strings"
)

// Place is a well-known place: a point in the built-up place itself, on
// land, and the 5-digit FIPS code of the county it must locate in.
type Place struct {
	Name     string
	Lat, Lon float64
	County   string
}

// Order says Higher must score above Lower on a module, or on one of its
// perils when Peril is set.
type Order struct {
	Module, Peril string
	Higher, Lower string
	Why           string
	Gap           string // non-empty for a known gap: why the data cannot support it yet
}

// Low says a place must score below Max on a module, or on one of its
// perils when Peril is set.
type Low struct {
	Module, Peril string
	Place         string
	Max           int
	Why           string
	Gap           string // as Order's
}

// Priority says whether a place's report must (High) or must not give a
// module's action at high priority: triage follows the evidence
// (docs/methodology.md, "Recommendations").
type Priority struct {
	Module, Place string
	High          bool
	Why           string
	Gap           string // as Order's
}

// Table is a validation table: its places in display order, and its
// checks, each kind in the order listed.
type Table struct {
	Places     []Place
	Orders     []Order
	Lows       []Low
	Priorities []Priority
}

//go:embed table.tsv
var builtin string

// Builtin is the table locrisk ships (table.tsv), parsed afresh on each
// call so that no caller sees another's changes.
func Builtin() (*Table, error) {
	return Parse(strings.NewReader(builtin), "table.tsv")
}

// scopeName writes a module, or one of its perils, as the table does:
// "landslide", "severeWeather/hail".
func scopeName(module, peril string) string {
	if peril != "" {
		return module + "/" + peril
	}
	return module
}

// key names a check in results: "landslide/landslide: Eureka Springs, AR >
// Jonesboro, AR".
func (o Order) key() string {
	return scopeName(o.Module, o.Peril) + ": " + o.Higher + " > " + o.Lower
}

// key names a check in results: "landslide: Fargo, ND < 20".
func (lo Low) key() string {
	return fmt.Sprintf("%s: %s < %d", scopeName(lo.Module, lo.Peril), lo.Place, lo.Max)
}

// want is the priority the check asks for, as the table writes it.
func (p Priority) want() string {
	if p.High {
		return "high"
	}
	return "not high"
}

// key names a check in results: "wildfire priority: Phoenix, AZ not high".
func (p Priority) key() string {
	return fmt.Sprintf("%s priority: %s %s", p.Module, p.Place, p.want())
}
