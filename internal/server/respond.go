package server

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// writeJSON writes v as the JSON body with the given status. Marshalling
// happens before the header is sent so a marshalling failure can still be
// answered with a clean 500.
// writeJSONBytes answers with doc, a JSON document already encoded with
// its final newline.
func writeJSONBytes(w http.ResponseWriter, status int, doc []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(doc)))
	w.WriteHeader(status)
	_, _ = w.Write(doc)
}

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
