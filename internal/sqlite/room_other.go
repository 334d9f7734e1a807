//go:build !unix

package sqlite

// freeBytes has no portable way to ask the file system for its room here:
// the write probe (fileRoom) and the writes themselves decide alone.
func freeBytes(string) (uint64, bool) { return 0, false }
