// Package e2e holds end-to-end tests of the locrisk binary: TestMain builds
// the real binary once (without the race detector, to keep it fast), and
// the tests run it as the operator would, through its command line, its
// HTTP API on a loopback port and its SQLite file, on the hand-written
// fixture data in testdata/data (or the real data sets for the benchmark
// when LOCRISK_DATA_DIR is set).
//
// Covered: crash recovery after SIGKILL (every job completed exactly once,
// with one report), graceful shutdown on SIGTERM, start-up without data,
// the operator command line (docs/api.md, Command line), one report job end
// to end, the create-to-completed latency benchmark, and the web console
// in headless chromium (console_test.go, docs/console.md; skipped without
// a chromium binary).
//
// Limits: the tests need POSIX signals (they skip elsewhere) and a free
// loopback port; they never touch the network beyond 127.0.0.1.
package e2e
