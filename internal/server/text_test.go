package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFreeText: the one rule of every free-text field (batch name,
// externalId, endpoint name): optional and required, names and labels.
func TestFreeText(t *testing.T) {
	tests := []struct {
		name string
		raw  string // "" = member absent
		rule textRule
		want string
		ok   bool
	}{
		{"plain", `"Coastal book"`, textRule{max: 20}, "Coastal book", true},
		{"absent, optional", ``, textRule{max: 20}, "", true},
		{"null, optional", `null`, textRule{max: 20}, "", true},
		{"empty, optional", `""`, textRule{max: 20}, "", true},
		{"blank, optional", `"   "`, textRule{max: 20}, "   ", true},
		{"absent, required", ``, textRule{max: 20, required: true}, "", false},
		{"null, required", `null`, textRule{max: 20, required: true}, "", false},
		{"empty, required", `""`, textRule{max: 20, required: true}, "", false},
		{"blank, required", `" \u00a0 "`, textRule{max: 20, required: true}, "", false},
		{"exactly max characters", `"` + strings.Repeat("é", 5) + `"`, textRule{max: 5, required: true}, strings.Repeat("é", 5), true},
		{"one over max", `"` + strings.Repeat("é", 6) + `"`, textRule{max: 5}, "", false},
		{"unicode letters", `"Zürich 東京 ✓"`, textRule{max: 20, required: true}, "Zürich 東京 ✓", true},
		{"newline", `"a\nb"`, textRule{max: 20}, "", false},
		{"carriage return", `"a\rb"`, textRule{max: 20, required: true}, "", false},
		{"tab", `"a\tb"`, textRule{max: 20}, "", false},
		{"escape sequence", `"a\u001b[31m"`, textRule{max: 20}, "", false},
		{"NUL", `"a\u0000"`, textRule{max: 20}, "", false},
		{"DEL", `"a\u007f"`, textRule{max: 20}, "", false},
		{"C1 control", `"a\u0085"`, textRule{max: 20}, "", false},
		{"right-to-left override, escaped", `"invoice\u202etxt.exe"`, textRule{max: 20}, "", false},
		{"right-to-left override, raw", "\"invoice\u202etxt.exe\"", textRule{max: 20}, "", false},
		{"left-to-right embedding", `"a\u202ab"`, textRule{max: 20}, "", false},
		{"pop directional formatting", `"a\u202cb"`, textRule{max: 20}, "", false},
		{"left-to-right isolate", `"a\u2066b"`, textRule{max: 20}, "", false},
		{"pop directional isolate", `"a\u2069b"`, textRule{max: 20}, "", false},
		{"left-to-right mark", `"a\u200eb"`, textRule{max: 20}, "", false},
		{"right-to-left mark", `"a\u200fb"`, textRule{max: 20}, "", false},
		{"arabic letter mark", `"a\u061cb"`, textRule{max: 20}, "", false},
		{"line separator", `"a\u2028b"`, textRule{max: 20}, "", false},
		{"paragraph separator, raw", "\"a\u2029b\"", textRule{max: 20, required: true}, "", false},
		{"zero-width joiner is text", "\"👩\u200d💻\"", textRule{max: 20}, "👩\u200d💻", true},
		{"right-to-left script is text", `"שלום"`, textRule{max: 20}, "שלום", true},
		{"label keeps a bidi override", `"a\u202eb"`, textRule{max: 20, label: true}, "a\u202eb", true},
		{"number", `5`, textRule{max: 20}, "", false},
		{"object", `{}`, textRule{max: 20}, "", false},
		{"array", `["a"]`, textRule{max: 20, required: true}, "", false},
		{"label keeps a newline", `"a\nb"`, textRule{max: 20, label: true}, "a\nb", true},
		{"label keeps a tab", `"\tb"`, textRule{max: 20, label: true}, "\tb", true},
		{"label still has a length", `"abcdef"`, textRule{max: 5, label: true}, "", false},
		{"the declared rules: batch name", `"a\nb"`, batchNameRule, "", false},
		{"the declared rules: endpoint name", `"a\u0085b"`, endpointNameRule, "", false},
		{"the declared rules: batch name, override", `"a\u202eb"`, batchNameRule, "", false},
		{"the declared rules: endpoint name, separator", `"a\u2028b"`, endpointNameRule, "", false},
		{"the declared rules: externalId", `"a\r\nb"`, externalIDRule, "a\r\nb", true},
		{"true", `true`, textRule{max: 20}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := freeText(json.RawMessage(tt.raw), tt.rule)
			if got != tt.want || ok != tt.ok {
				t.Errorf("freeText(%s, %+v) = %q, %v; want %q, %v", tt.raw, tt.rule, got, ok, tt.want, tt.ok)
			}
		})
	}
}
