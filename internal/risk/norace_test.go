//go:build !race

package risk

// raceEnabled: see race_test.go.
const raceEnabled = false
