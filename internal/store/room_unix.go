//go:build unix

package store

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// diskRoom fails with ErrStorageFull when the file system that holds the
// database has less than probeRoom bytes left for this process: the
// blocks available to unprivileged users, or, for root, which may also
// write into the blocks the file system reserves, all free blocks.
func diskRoom(path string) error {
	var st unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(path), &st); err != nil {
		return nil // no answer is no evidence: the write probe decides
	}
	blocks := st.Bavail
	if os.Geteuid() == 0 {
		blocks = st.Bfree
	}
	if free := uint64(blocks) * uint64(st.Bsize); free < probeRoom {
		return fmt.Errorf("%w: %d bytes left on the file system of %s", ErrStorageFull, free, filepath.Dir(path))
	}
	return nil
}
