//go:build unix

package sqlite

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// freeBytes is the room left for this process on the file system that
// holds path's directory: the blocks available to unprivileged users, or,
// for root, which may also write into the blocks the file system
// reserves, all free blocks. ok is false when the file system does not
// say.
func freeBytes(path string) (free uint64, ok bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(path), &st); err != nil {
		return 0, false
	}
	blocks := st.Bavail
	if os.Geteuid() == 0 {
		blocks = st.Bfree
	}
	return uint64(blocks) * uint64(st.Bsize), true
}
