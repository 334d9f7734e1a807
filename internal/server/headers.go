package server

import "net/http"

// Request header limits (docs/api.md, Errors; docs/operations.md, Limits and
// defaults).
const (
	// MaxHeaderBytes is the documented limit on a request's line and
	// headers; beyond it the API answers 431 headers_too_large in the
	// error shape.
	MaxHeaderBytes = 64 << 10
	// HeaderReadLimit is what http.Server.MaxHeaderBytes should be: twice
	// the documented limit, so that a request just over it still reaches
	// the handler and is answered in JSON. Beyond this net/http itself
	// answers 431 in plain text before any handler runs.
	HeaderReadLimit = 2 * MaxHeaderBytes
)

// headerBytes is the size of r's request line and headers as sent, give
// or take the whitespace around each colon.
func headerBytes(r *http.Request) int {
	n := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + 2
	if r.Host != "" {
		n += len("Host: ") + len(r.Host) + 2 // net/http moves Host out of Header
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + 2 + len(v) + 2
		}
	}
	return n + 2
}

func headersTooLarge() *Error {
	return errorf(codeHeadersTooLarge, "the request line and headers are larger than %d bytes", MaxHeaderBytes)
}
