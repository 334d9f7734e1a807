package risk

// The tests that run the validation table (validation_real_test.go) are
// in package risk_test, since internal/risk/validation imports this
// package; these give them the engine loaded once per test binary and the
// invariants every assessment keeps.
var (
	LoadReal        = loadReal
	CheckInvariants = checkInvariants
)
