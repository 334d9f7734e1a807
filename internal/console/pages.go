package console

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"strconv"
)

// pageKind is one page of the console.
type pageKind int

const (
	pageAddress pageKind = iota
	pageSignIn
	pageReport
	pagePortfolio
	pageBatch
	pageOperations
	pageNotFound
	numPages
)

// pageInfo is what a page is: its template, its script, its title, the
// navigation entry it belongs to and the path value holding its id.
type pageInfo struct {
	name   string // templates/<name>.html and assets/<name>.js
	title  string
	nav    string // the navigation entry shown as current; "" for none
	idPath string // "" for a page without an id
}

func (p pageKind) info() pageInfo {
	switch p {
	case pageAddress:
		return pageInfo{name: "address", title: "One address", nav: "address"}
	case pageSignIn:
		return pageInfo{name: "signin", title: "Sign in"}
	case pageReport:
		return pageInfo{name: "report", title: "Report", nav: "address", idPath: "reportId"}
	case pagePortfolio:
		return pageInfo{name: "portfolio", title: "Portfolios", nav: "portfolio"}
	case pageBatch:
		return pageInfo{name: "batch", title: "Batch", nav: "portfolio", idPath: "batchId"}
	case pageOperations:
		return pageInfo{name: "operations", title: "Operations", nav: "operations"}
	default:
		return pageInfo{name: "notfound", title: "Not found"}
	}
}

// pageData is what a page's template sees.
type pageData struct {
	Page    string // the page's name: <body data-page>, its script
	Title   string
	Nav     string
	ID      string // the report or batch id of the path
	Version string
	Map     *usMap // the address page's map
}

// pageSet holds each page's parsed templates (the layout and the page).
type pageSet struct {
	byName map[string]*template.Template
}

func loadPages(assets *assetSet) (*pageSet, error) {
	funcs := template.FuncMap{"asset": assets.url}
	s := &pageSet{byName: map[string]*template.Template{}}
	for p := range numPages {
		p := p.info()
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/"+p.name+".html")
		if err != nil {
			return nil, fmt.Errorf("console: page %s: %w", p.name, err)
		}
		s.byName[p.name] = t
		// Rendered once now, so that a template's mistake (an unknown
		// asset, a missing field) stops New rather than a request.
		if err := t.Execute(io.Discard, pageData{Page: p.name, Title: p.title, ID: "x", Map: &usMap{}}); err != nil {
			return nil, fmt.Errorf("console: page %s: %w", p.name, err)
		}
	}
	return s, nil
}

// page answers a page. The HTML holds no account data (the scripts fetch
// it with the tab's key), so it may be cached and revalidated: ETag and
// Cache-Control: no-cache.
func (c *Console) page(kind pageKind) http.HandlerFunc {
	p := kind.info()
	return func(w http.ResponseWriter, r *http.Request) {
		d := pageData{Page: p.name, Title: p.title, Nav: p.nav, Version: c.version}
		if p.idPath != "" {
			d.ID = r.PathValue(p.idPath)
			form := reportIDForm
			if kind == pageBatch {
				form = batchIDForm
			}
			if !form.MatchString(d.ID) {
				c.notFound(w, r)
				return
			}
		}
		if kind == pageAddress {
			d.Map = &c.usMap
		}
		c.render(w, r, http.StatusOK, d)
	}
}

// notFound is the console's 404: a page in its layout that leads back.
func (c *Console) notFound(w http.ResponseWriter, r *http.Request) {
	p := pageNotFound.info()
	c.render(w, r, http.StatusNotFound, pageData{Page: p.name, Title: p.title, Version: c.version})
}

func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, d pageData) {
	var buf bytes.Buffer
	if err := c.pages.byName[d.Page].Execute(&buf, d); err != nil {
		c.log.ErrorContext(r.Context(), "console: rendering a page", "page", d.Page, "error", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	sum := sha256.Sum256(buf.Bytes())
	etag := strconv.Quote(hex.EncodeToString(sum[:8]))
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	if status == http.StatusOK {
		h.Set("ETag", etag)
		h.Set("Cache-Control", "no-cache")
		if etagMatches(r.Header.Get("If-None-Match"), etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}
