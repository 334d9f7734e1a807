// Package risk is the location-risk engine. Load reads every public data set
// from the data directory once; Engine.Locate decides whether a coordinate is
// covered; Engine.Assess scores a covered point on six hazard modules and
// returns a complete Assessment.
//
// A module score is the national percentile of the module's hazard
// indicators against a fixed reference set (the Census Gazetteer county
// interior points). FEMA NRI county scores are shown beside each module as
// an expected-loss benchmark and only become the score where no hazard layer
// covers the point. The same input and data always give the same output.
package risk

import "errors"

// ErrUnsupportedLocation is returned for coordinates outside US coverage.
var ErrUnsupportedLocation = errors.New("coordinate outside supported United States coverage")
