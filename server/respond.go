package server

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// writeJSON writes v as the JSON body with the given status. Marshalling
// happens before the header is sent so a marshalling failure can still be
// answered with a clean 500.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal_error","message":"response encoding failed","requestId":` +
			strconv.Quote(w.Header().Get("X-Request-Id")) + `}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// apiTimeLayout is the API's time format: RFC 3339, UTC, whole seconds.
const apiTimeLayout = "2006-01-02T15:04:05Z"

// apiTime formats t for the API, truncating to the second so a time never
// appears later than it happened.
func apiTime(t time.Time) string { return t.UTC().Truncate(time.Second).Format(apiTimeLayout) }

// apiTimePtr is apiTime for optional times.
func apiTimePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := apiTime(*t)
	return &s
}
