package data

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// An install assembles a pack in a hidden folder inside its target folder
// and then moves it into place (data fetch, data export). Staying inside
// the target means the moves never cross file systems, so the target may
// be a mount point (a container volume), and the target keeps its own
// inode and mode: a shell inside it, or a service that has it open, sees
// the new files.
type install struct {
	dir     string // the target folder
	created bool   // the target did not exist before
	staging string // the hidden folder the new pack is assembled in
}

// Hidden names inside a target, so that nothing looks for them as data.
const (
	stagingPrefix  = ".locrisk-new-"
	retiredPrefix  = ".locrisk-old-"
	downloadPrefix = ".locrisk-download-"
)

// beginInstall prepares dir (created when absent, mode 0755) and a staging
// folder inside it.
func beginInstall(dir string) (*install, error) {
	in := &install{dir: dir}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		if err := os.Chmod(dir, 0o755); err != nil { // whatever the umask
			return nil, err
		}
		in.created = true
	}
	staging, err := os.MkdirTemp(dir, stagingPrefix)
	if err != nil {
		in.abort()
		return nil, err
	}
	in.staging = staging
	return in, nil
}

// abort removes what the install made: the staging folder, and the target
// when the install created it.
func (in *install) abort() {
	if in.staging != "" {
		os.RemoveAll(in.staging)
	}
	if in.created {
		os.Remove(in.dir) // only if empty: nothing else was put there
	}
}

// commit replaces the target's contents with the staging folder's. The old
// manifest leaves first and the new one arrives last, so a folder caught
// half way (a crash) is never taken for a pack of mixed files. A failed
// move puts everything back. The old files are removed last; if that
// fails, the new pack is in place all the same and leftover names the
// folder to delete by hand.
func (in *install) commit() (leftover string, err error) {
	if err := normalizeModes(in.staging); err != nil {
		return "", err
	}
	retired, err := os.MkdirTemp(in.dir, retiredPrefix)
	if err != nil {
		return "", err
	}
	old, err := entriesExcept(in.dir, in.staging, retired)
	if err != nil {
		return "", err
	}
	manifestFirst(old)
	var movedOut []string
	rollback := func(placed []string) {
		for _, name := range placed {
			os.Rename(filepath.Join(in.dir, name), filepath.Join(in.staging, name))
		}
		for _, name := range movedOut {
			os.Rename(filepath.Join(retired, name), filepath.Join(in.dir, name))
		}
		os.Remove(retired)
	}
	for _, name := range old {
		if err := os.Rename(filepath.Join(in.dir, name), filepath.Join(retired, name)); err != nil {
			rollback(nil)
			return "", err
		}
		movedOut = append(movedOut, name)
	}
	fresh, err := entriesExcept(in.staging)
	if err != nil {
		rollback(nil)
		return "", err
	}
	manifestFirst(fresh)
	slices.Reverse(fresh) // the manifest last
	var placed []string
	for _, name := range fresh {
		if err := os.Rename(filepath.Join(in.staging, name), filepath.Join(in.dir, name)); err != nil {
			rollback(placed)
			return "", err
		}
		placed = append(placed, name)
	}
	os.Remove(in.staging)
	in.staging = ""
	if err := os.RemoveAll(retired); err != nil {
		return retired, nil
	}
	return "", nil
}

// entriesExcept lists dir's entries other than the given paths.
func entriesExcept(dir string, skip ...string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !slices.Contains(skip, filepath.Join(dir, e.Name())) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// manifestFirst moves the manifest's name to the front of names.
func manifestFirst(names []string) {
	if i := slices.Index(names, ManifestName); i > 0 {
		copy(names[1:i+1], names[:i])
		names[0] = ManifestName
	}
}

// normalizeModes makes every folder under root 0755 and every file 0644,
// whatever the umask of whoever installs the pack: it is read by whoever
// runs the service (docs/data.md).
func normalizeModes(root string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o644)
		if d.IsDir() {
			mode = 0o755
		}
		if err := os.Chmod(path, mode); err != nil {
			return fmt.Errorf("setting the mode of %s: %w", path, err)
		}
		return nil
	})
}
