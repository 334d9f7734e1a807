// Package apidoc holds the OpenAPI 3.1 document of the HTTP API
// (openapi.json beside this file), which the server serves at
// GET /api/v1/openapi.json without authentication.
//
// docs/api.md is the prose reference; the document states the same
// operations, numbered as there in x-locrisk-operation, for client
// generators and validators. The server package's tests validate every
// response they record against it, so a change to a response shape fails
// those tests until this document says the same. This package's own tests
// keep the document to what third-party tools read alike (Prism's
// validating proxy, Redocly's recommended rules, libopenapi-validator):
// no jsonSchemaDialect or JSON Schema keywords older drafts misread, every
// component attached, a HEAD beside every GET, tags described, a licence.
package apidoc

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
)

//go:embed openapi.json
var document []byte

// Document is the OpenAPI document and its strong entity tag.
type Document struct {
	JSON []byte
	ETag string
}

// Load returns a copy of the embedded document, so a caller cannot alter
// what another caller sees, with an ETag derived from its bytes: the
// document changes only with the binary, and a client revalidating with
// If-None-Match gets 304 until it does.
func Load() Document {
	b := append([]byte(nil), document...)
	sum := sha256.Sum256(b)
	return Document{JSON: b, ETag: `"` + hex.EncodeToString(sum[:16]) + `"`}
}
