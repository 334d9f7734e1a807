//go:build !unix

package main

// openFileLimit is unknown off Unix.
func openFileLimit() uint64 { return 0 }
