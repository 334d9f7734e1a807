package server

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"

	"github.com/locrisk/locrisk/internal/view"
)

// getReportPDF is GET /location-risk/reports/{reportId}/pdf (docs/api.md,
// Reports).
// The same stored report always renders to the same bytes, so the response
// carries a strong ETag (a hash of those bytes) and If-None-Match answers
// 304 Not Modified.
func (s *Server) getReportPDF(w http.ResponseWriter, r *http.Request, p *principal) error {
	id, err := reportIDParam(r)
	if err != nil {
		return err
	}
	rep, err := s.store.GetReport(r.Context(), p.account.ID, id)
	if err != nil {
		return storeError(err, codeReportNotFound, s.now())
	}
	doc, err := view.SignedPDF(r.Context(), rep, s.loc, s.signer)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(doc)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	h := w.Header()
	h.Set("ETag", etag)
	// Revalidate rather than refuse to cache: the ETag makes that cheap.
	h.Set("Cache-Control", "private, no-cache")
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Type", "application/pdf")
	h.Set("Content-Disposition", `inline; filename="location-risk-`+rep.ID+`.pdf"`)
	h.Set("Content-Length", strconv.Itoa(len(doc)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(doc)
	}
	return nil
}

// etagMatches implements If-None-Match's weak comparison (RFC 9110 13.1.2):
// "*" or any listed tag equal to ours, ignoring a W/ prefix.
func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}
