package server

import (
	"net/http"
	"strconv"
)

// getOpenAPI is GET /api/v1/openapi.json (docs/api.md, OpenAPI document):
// the OpenAPI 3.1 document of package apidoc, without authentication. It
// changes only with the binary, so clients may cache it and revalidate
// with If-None-Match against its strong ETag.
func (s *Server) getOpenAPI(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("ETag", s.apiDoc.ETag)
	h.Set("Cache-Control", "public, no-cache")
	if etagMatches(r.Header.Get("If-None-Match"), s.apiDoc.ETag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(s.apiDoc.JSON)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(s.apiDoc.JSON)
	}
}
