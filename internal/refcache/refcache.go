// Package refcache keeps the engine's reference distributions in a file,
// for a command that runs without the database the server keeps them in
// (`locrisk score --reference-cache FILE`, docs/portfolio.md). Building
// the reference measures every census tract, several seconds on each run; reading it back takes well under one.
package refcache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// magic starts every cache file, so a file of something else is never
// taken for one.
const magic = "locrisk-reference-cache\n"

// File is a risk.ReferenceCache in one file: the key line, then the body.
// It holds one reference, as the database's cache does: saving another key
// replaces it.
type File struct{ Path string }

// LoadReference returns the body saved under key, or nil when the file is
// missing or holds another key (another data version or build). A file
// that is not a cache file is an error, which the engine logs before
// rebuilding.
func (f File) LoadReference(ctx context.Context, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read reference cache: %w", err)
	}
	rest, ok := bytes.CutPrefix(b, []byte(magic))
	if !ok {
		return nil, fmt.Errorf("read reference cache: %s is not a reference cache file", f.Path)
	}
	k, body, ok := bytes.Cut(rest, []byte("\n"))
	if !ok {
		return nil, fmt.Errorf("read reference cache: %s is cut short", f.Path)
	}
	if string(k) != key {
		return nil, nil
	}
	return body, nil
}

// SaveReference writes body under key, through a temporary file renamed
// into place, so a reader never sees half a file.
func (f File) SaveReference(ctx context.Context, key string, body []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if strings.Contains(key, "\n") {
		return fmt.Errorf("save reference cache: the key holds a line break")
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.Path), "."+filepath.Base(f.Path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("save reference cache: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	_, err = tmp.WriteString(magic + key + "\n")
	if err == nil {
		_, err = tmp.Write(body)
	}
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), f.Path)
	}
	if err != nil {
		return fmt.Errorf("save reference cache: %w", err)
	}
	return nil
}
