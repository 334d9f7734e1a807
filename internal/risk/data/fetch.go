package data

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// MaxPackBytes bounds a downloaded pack archive and what it unpacks to: the
// public pack is about 25 MB, so 1 GiB leaves room for growth while a
// wrong URL cannot fill the disk.
const MaxPackBytes = 1 << 30

// Fetch downloads the data pack archive at url (a .tar.gz of manifest.json
// and the files under their catalog paths, docs/data.md), checks that it
// arrived whole and that its SHA-256 is wantSHA256, unpacks it in a hidden
// folder inside dir, verifies every file against the pack's own manifest,
// and only then moves it into place, replacing what was there (install). dir must be absent, an empty
// folder or a data pack (a folder with a manifest): anything else is
// refused before the download, so a mistyped path cannot delete a folder
// or file. Any failure leaves dir as it was (a dir the fetch created is
// removed again). The old pack is removed last;
// if that fails, the new pack is installed all the same and leftover names
// what remains to delete. client nil means http.DefaultClient.
func Fetch(ctx context.Context, client *http.Client, url, wantSHA256, dir string) (m *Manifest, leftover string, err error) {
	want := strings.ToLower(strings.TrimSpace(wantSHA256))
	if b, err := hex.DecodeString(want); err != nil || len(b) != sha256.Size {
		return nil, "", fmt.Errorf("--sha256 %q is not 64 hex digits", wantSHA256)
	}
	if client == nil {
		client = http.DefaultClient
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, "", err
	}
	if err := replaceable(dir); err != nil {
		return nil, "", err
	}
	in, err := beginInstall(dir)
	if err != nil {
		return nil, "", err
	}
	defer func() {
		if err != nil {
			in.abort()
		}
	}()
	archive, err := download(ctx, client, url, want, dir)
	if err != nil {
		return nil, "", err
	}
	defer os.Remove(archive)
	if err := unpack(archive, in.staging); err != nil {
		return nil, "", fmt.Errorf("%s: the archive cannot be unpacked (%w); nothing was replaced", url, err)
	}
	m, err = ReadManifest(os.DirFS(in.staging))
	if errors.Is(err, ErrNoManifest) {
		return nil, "", fmt.Errorf("%s: the archive holds no %s at its top or in its one top folder; nothing was replaced", url, ManifestName)
	}
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w; nothing was replaced", url, err)
	}
	bad, err := m.Verify(os.DirFS(in.staging))
	if err != nil {
		return nil, "", err
	}
	if len(bad) > 0 {
		return nil, "", fmt.Errorf("%s: %d file(s) do not match the pack's manifest, the first %s: %s; nothing was replaced", url, len(bad), bad[0].Path, bad[0].Problem)
	}
	leftover, err = in.commit()
	if err != nil {
		return nil, "", err
	}
	return m, leftover, nil
}

// replaceable refuses a target that is not absent, an empty folder or a
// data pack: a file, a symbolic link, or a folder of something else.
func replaceable(dir string) error {
	st, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link: give the folder it points to", dir)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is a file, not a data pack folder; nothing was changed", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, ManifestName)); err != nil {
		return fmt.Errorf("%s holds files but no %s, so it is not a data pack; give an empty or new folder; nothing was changed", dir, ManifestName)
	}
	return nil
}

// download writes the body at url to a hidden temporary file in dir and
// returns its name, once it has all arrived (as many bytes as the server
// announced) and its SHA-256 is want.
func download(ctx context.Context, client *http.Client, url, want, dir string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", url, resp.Status)
	}
	if resp.ContentLength > MaxPackBytes {
		return "", fmt.Errorf("%s: %d bytes, more than a data pack's %d", url, resp.ContentLength, int64(MaxPackBytes))
	}
	f, err := os.CreateTemp(dir, downloadPrefix+"*.tar.gz")
	if err != nil {
		return "", err
	}
	name := f.Name()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(resp.Body, MaxPackBytes+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		err = fmt.Errorf("%s: download stopped after %d bytes: %w", url, n, err)
	case n > MaxPackBytes:
		err = fmt.Errorf("%s: more than a data pack's %d bytes", url, int64(MaxPackBytes))
	case resp.ContentLength >= 0 && n != resp.ContentLength:
		err = fmt.Errorf("%s: partial download, %d of %d bytes", url, n, resp.ContentLength)
	}
	if got := hex.EncodeToString(h.Sum(nil)); err == nil && got != want {
		err = fmt.Errorf("%s: sha256 %s, not the %s asked for; nothing was replaced", url, got, want)
	}
	if err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

// unpack extracts a .tar.gz into dir: regular files and folders only,
// each under a relative path that stays inside dir, at most MaxPackBytes
// in all. A single top-level folder holding manifest.json is unwrapped.
func unpack(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("not a .tar.gz: %w", err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	var total int64
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the archive: %w", err)
		}
		name := path.Clean(strings.TrimPrefix(hdr.Name, "./"))
		if name == "." {
			continue
		}
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") || strings.Contains(name, "\\") {
			return fmt.Errorf("archive entry %q is outside the pack", hdr.Name)
		}
		target := filepath.Join(dir, filepath.FromSlash(name))
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			total += hdr.Size
			if total > MaxPackBytes {
				return fmt.Errorf("the archive unpacks to more than %d bytes", int64(MaxPackBytes))
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			out, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			if errors.Is(err, os.ErrExist) {
				return fmt.Errorf("archive lists %q twice", name)
			}
			if err != nil {
				return err
			}
			_, err = io.Copy(out, io.LimitReader(tr, hdr.Size))
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		default:
			return fmt.Errorf("archive entry %q is not a regular file or folder", hdr.Name)
		}
	}
	return unwrapSingleFolder(dir)
}

// unwrapSingleFolder moves the contents of dir's only entry, a folder
// holding the manifest, up into dir (an archive made of "pack/...").
func unwrapSingleFolder(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, ManifestName)); err == nil {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || !entries[0].IsDir() {
		return err
	}
	inner := filepath.Join(dir, entries[0].Name())
	if _, err := os.Stat(filepath.Join(inner, ManifestName)); err != nil {
		return nil
	}
	children, err := os.ReadDir(inner)
	if err != nil {
		return err
	}
	for _, c := range children {
		if err := os.Rename(filepath.Join(inner, c.Name()), filepath.Join(dir, c.Name())); err != nil {
			return err
		}
	}
	return os.Remove(inner)
}
