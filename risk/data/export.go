package data

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Export writes the pack src (its manifest and every file the manifest
// lists) to the folder dir, which must be new or empty, and returns the
// manifest. The files are written to a folder beside dir and checked
// against the manifest before it takes dir's place, so a failure leaves
// dir as it was (docs/data.md, "Replacing a data set").
func Export(src fs.FS, dir string) (*Manifest, error) {
	m, err := ReadManifest(src)
	if err != nil {
		return nil, err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	if err := emptyOrAbsent(dir); err != nil {
		return nil, err
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".export-")
	if err != nil {
		return nil, err
	}
	placed := false
	defer func() {
		if !placed {
			os.RemoveAll(tmp)
		}
	}()
	// MkdirTemp makes the folder for its owner only; a pack is read by
	// whoever runs the service.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	names := []string{ManifestName}
	for _, f := range m.Files {
		names = append(names, f.Path)
	}
	for _, name := range names {
		if err := copyOut(src, name, filepath.Join(tmp, filepath.FromSlash(name))); err != nil {
			return nil, err
		}
	}
	bad, err := m.Verify(os.DirFS(tmp))
	if err != nil {
		return nil, err
	}
	if len(bad) > 0 {
		return nil, MismatchError(bad)
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, err
	}
	placed = true
	return m, nil
}

// emptyOrAbsent refuses a target that exists and is not an empty folder.
func emptyOrAbsent(dir string) error {
	st, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s exists and is not a folder; give a new or empty folder", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s is not empty; give a new or empty folder (nothing was written)", dir)
	}
	return nil
}

// copyOut copies the file name of src to path, making its folders.
func copyOut(src fs.FS, name, path string) error {
	in, err := src.Open(name)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("%s: %w", name, err)
	}
	return out.Close()
}
