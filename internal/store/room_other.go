//go:build !unix

package store

// diskRoom has no portable way to ask the file system for its room here;
// the write probe (fileRoom) decides alone.
func diskRoom(string) error { return nil }
