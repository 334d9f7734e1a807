//go:build race

package risk

// raceEnabled shrinks the samples that real-data tests assess through the
// public API when the race detector slows every call several-fold: the
// race detector looks for data races, which a few hundred assessments find
// as well as thousands, and the full-population checks still run in full.
const raceEnabled = true
