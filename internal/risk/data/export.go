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
// manifest. The files are written to a hidden folder inside dir and
// checked against the manifest before they are moved into place
// (install), so a failure leaves dir as it was (docs/data.md, "Replacing
// a data set").
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
	in, err := beginInstall(dir)
	if err != nil {
		return nil, err
	}
	names := []string{ManifestName}
	for _, f := range m.Files {
		names = append(names, f.Path)
	}
	for _, name := range names {
		if err := copyOut(src, name, filepath.Join(in.staging, filepath.FromSlash(name))); err != nil {
			in.abort()
			return nil, err
		}
	}
	bad, err := m.Verify(os.DirFS(in.staging))
	if err == nil && len(bad) > 0 {
		err = MismatchError(bad)
	}
	if err == nil {
		_, err = in.commit() // nothing old to leave over
	}
	if err != nil {
		in.abort()
		return nil, err
	}
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
	if st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link: give the folder it points to", dir)
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
