package console

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
)

//go:embed assets templates
var files embed.FS

// asset is one file of assets/, as served.
type asset struct {
	body        []byte
	contentType string
	version     string // the first 12 hex digits of its SHA-256
	etag        string
}

// assetSet is every file of assets/, by name.
type assetSet struct {
	byName map[string]*asset
}

func loadAssets() (*assetSet, error) {
	entries, err := fs.ReadDir(files, "assets")
	if err != nil {
		return nil, fmt.Errorf("console: assets: %w", err)
	}
	s := &assetSet{byName: map[string]*asset{}}
	for _, e := range entries {
		b, err := fs.ReadFile(files, "assets/"+e.Name())
		if err != nil {
			return nil, fmt.Errorf("console: assets: %w", err)
		}
		ct := mime.TypeByExtension(path.Ext(e.Name()))
		switch path.Ext(e.Name()) {
		case ".js":
			ct = "text/javascript; charset=utf-8"
		case ".css":
			ct = "text/css; charset=utf-8"
		case ".svg":
			ct = "image/svg+xml"
		}
		if ct == "" {
			return nil, fmt.Errorf("console: asset %s: no content type for its extension", e.Name())
		}
		sum := sha256.Sum256(b)
		v := hex.EncodeToString(sum[:6])
		s.byName[e.Name()] = &asset{body: b, contentType: ct, version: v, etag: strconv.Quote(v)}
	}
	return s, nil
}

// url is the address a page refers to an asset by: its path with its
// version, so that a browser may keep it for good and a new binary's
// files are new addresses. An unknown name is a mistake in a template,
// which New reports (pages.go renders every page once).
func (s *assetSet) url(name string) (string, error) {
	a, ok := s.byName[name]
	if !ok {
		return "", fmt.Errorf("console: no asset %q", name)
	}
	return Prefix + "assets/" + name + "?v=" + a.version, nil
}

// serveAsset answers GET assets/{name}. Asked for with its current
// version, a file may be cached for a year (immutable); without, or with
// another version, it must be revalidated (ETag).
func (c *Console) serveAsset(w http.ResponseWriter, r *http.Request) {
	a, ok := c.assets.byName[r.PathValue("name")]
	if !ok {
		c.notFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("ETag", a.etag)
	if r.URL.Query().Get("v") == a.version {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	if etagMatches(r.Header.Get("If-None-Match"), a.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(a.body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(a.body)
	}
}

// etagMatches reports whether an If-None-Match header names etag (or is
// "*"); weak forms compare equal, as RFC 9110 says for If-None-Match.
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}
