package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Hints for a required member that is missing (docs/api.md, Errors).
// Members a body has beyond those an operation reads are ignored, as the
// contract says, so {"lat": 37.77, "lng": -122.41} is a body without a
// latitude; its error then names the members it did not read and, where
// one looks like a name the operation reads ("lat", "Longitude",
// "external_id"), that name. Only a refused body pays for the hint.

// maxHintedFields is how many unknown members a hint names; maxHintedKey
// how many characters of each it repeats.
const (
	maxHintedFields = 3
	maxHintedKey    = 40
)

// fieldAliases are the names, folded as foldFieldName folds them, that
// clients use for the members the API reads. A name is offered only when
// the operation reads it (unknownFieldHint's known).
var fieldAliases = map[string]string{
	"lat": "latitude", "latt": "latitude", "y": "latitude",
	"lng": "longitude", "lon": "longitude", "long": "longitude", "lgt": "longitude", "x": "longitude",
	"id": "externalId", "ref": "externalId", "reference": "externalId", "label": "externalId",
	"rows": "items", "points": "items", "locations": "items", "coordinates": "items", "coords": "items",
}

// foldFieldName is key in lower case without '_', '-', '.' and spaces,
// so that "External_ID" and "externalId" compare equal.
func foldFieldName(key string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', '.', ' ':
			return -1
		}
		return r
	}, strings.ToLower(key))
}

// guessField is the name among known that key, a member the operation
// does not read, most likely meant, or "": the same name in another case
// or spelling ("Latitude", "external_id"), a common alias ("lat", "lng",
// "x"), or a longer or misspelt coordinate name ("latitud",
// "longtitude").
func guessField(key string, known []string) string {
	k := foldFieldName(key)
	offer := func(name string) string {
		for _, n := range known {
			if n == name {
				return name
			}
		}
		return ""
	}
	for _, n := range known {
		if foldFieldName(n) == k {
			return n
		}
	}
	if name, ok := fieldAliases[k]; ok {
		return offer(name)
	}
	switch {
	case strings.HasPrefix(k, "lat"):
		return offer("latitude")
	case strings.HasPrefix(k, "lon"), strings.HasPrefix(k, "lng"):
		return offer("longitude")
	}
	return ""
}

// unknownFieldHint describes the members of obj, a JSON object that
// passed json.Valid, whose names are not among known (the members the
// operation reads), for the message of a missing required member: the
// ones that look like a known name with the name meant (`unknown field
// "lng"; did you mean "longitude"?`), else the unknown ones with the names
// expected. "" when every member is known.
func unknownFieldHint(obj json.RawMessage, known ...string) string {
	var guessed, meant, unknown []string
	seen := map[string]bool{}
	more := 0
	for raw := range members(obj) {
		if isKnownKey(raw, known) {
			continue
		}
		key := unescapeKey(raw)
		if seen[key] {
			continue
		}
		seen[key] = true
		if m := guessField(key, known); m != "" {
			if len(guessed) < maxHintedFields {
				guessed, meant = append(guessed, quoteKey(key)), append(meant, quoteKey(m))
			}
			continue
		}
		if len(unknown) < maxHintedFields {
			unknown = append(unknown, quoteKey(key))
		} else {
			more++
		}
	}
	switch {
	case len(guessed) > 0:
		return fmt.Sprintf("unknown %s %s; did you mean %s?", fieldNoun(len(guessed)), strings.Join(guessed, ", "), strings.Join(meant, ", "))
	case len(unknown) > 0:
		list := strings.Join(unknown, ", ")
		if more > 0 {
			list += fmt.Sprintf(" and %d more", more)
		}
		expected := make([]string, len(known))
		for i, n := range known {
			expected[i] = quoteKey(n)
		}
		return fmt.Sprintf("unknown %s %s; the fields are %s", fieldNoun(len(unknown)+more), list, strings.Join(expected, ", "))
	}
	return ""
}

// withFieldHint is msg followed by the hint of unknownFieldHint, if any.
func withFieldHint(msg string, obj json.RawMessage, known ...string) string {
	if h := unknownFieldHint(obj, known...); h != "" {
		return msg + "; " + h
	}
	return msg
}

// missingHint is msg, the message of a required member's error, with the
// hint of unknownFieldHint when the member (raw) is absent from obj: a
// member present but invalid (a string, out of range) is its own fault.
func missingHint(msg string, raw, obj json.RawMessage, known ...string) string {
	if raw != nil {
		return msg
	}
	return withFieldHint(msg, obj, known...)
}

// missingFieldError is err, a required member's *Error, with missingHint's
// hint added to its message.
func missingFieldError(err error, raw, obj json.RawMessage, known ...string) error {
	ae, ok := err.(*Error)
	if !ok || raw != nil {
		return err
	}
	hinted := *ae
	hinted.Message = withFieldHint(hinted.Message, obj, known...)
	return &hinted
}

func fieldNoun(n int) string {
	if n == 1 {
		return "field"
	}
	return "fields"
}

func isKnownKey(raw []byte, known []string) bool {
	for _, n := range known {
		if keyIs(raw, n) {
			return true
		}
	}
	return false
}

// unescapeKey is the raw (still escaped) key of a valid JSON object as a
// string.
func unescapeKey(raw []byte) string {
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(append(append(quoted, '"'), raw...), '"')
	var key string
	if json.Unmarshal(quoted, &key) != nil {
		return string(raw)
	}
	return key
}

// quoteKey is key in double quotes, cut to maxHintedKey characters.
func quoteKey(key string) string {
	if utf8.RuneCountInString(key) > maxHintedKey {
		key = string([]rune(key)[:maxHintedKey]) + "..."
	}
	return fmt.Sprintf("%q", key)
}
