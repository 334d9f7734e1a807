package server

// The free-text fields of the API and their one rule (docs/api.md, "Create
// a batch" and "Create an endpoint"). Every field is declared here, so two
// fields cannot drift apart again as a batch's name and an endpoint's name
// did.

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// textRule is what a free-text field allows.
type textRule struct {
	max      int  // characters (Unicode code points)
	required bool // absent, null, "" and blank are refused
	// labels may hold control characters: an externalId is the caller's own
	// key for a row, handed back exactly as sent (the CSV quotes line
	// breaks and defuses a leading tab or carriage return, docs/api.md).
	// Names may not (notInName): they are shown in logs and dashboards,
	// where a line break or a terminal escape would forge lines and a
	// bidirectional override would show text other than what is stored.
	label bool
}

var (
	batchNameRule    = textRule{max: maxBatchNameLen}
	externalIDRule   = textRule{max: maxExternalIDLen, label: true}
	endpointNameRule = textRule{max: maxEndpointNameLen, required: true}
)

// notInName reports whether a name may not hold c (docs/api.md, "Create a
// batch"): a control character (U+0000–U+001F, U+007F–U+009F), a line or
// paragraph separator (U+2028, U+2029: line breaks by other names), or a
// bidirectional formatting character (U+200E, U+200F, U+061C,
// U+202A–U+202E, U+2066–U+2069), which reorders how the text around it is
// shown.
func notInName(c rune) bool {
	switch {
	case unicode.IsControl(c),
		c == '\u2028', c == '\u2029',
		c == '\u200e', c == '\u200f', c == '\u061c',
		c >= '\u202a' && c <= '\u202e',
		c >= '\u2066' && c <= '\u2069':
		return true
	}
	return false
}

// freeText decodes a free-text member of a request body by its rule: a
// JSON string of at most r.max characters, without the characters
// notInName refuses unless r.label. An optional member may be absent, null or "" (all read
// as ""); a required one must be a string that is not blank. ok is false
// when raw breaks the rule; the caller answers with its field's code.
func freeText(raw json.RawMessage, r textRule) (s string, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || isJSONNull(raw) {
		return "", !r.required
	}
	if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	if r.required && strings.TrimSpace(s) == "" {
		return "", false
	}
	if utf8.RuneCountInString(s) > r.max || (!r.label && strings.IndexFunc(s, notInName) >= 0) {
		return "", false
	}
	return s, true
}
