package pdf

import (
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// rgb is a colour in 0..255 components.
type rgb struct{ r, g, b int }

// The brand palette. Level colours run green to red like most risk scales
// (ColorBrewer RdYlGn family), darkened where white text sits on them.
var (
	colInk      = rgb{31, 41, 55}    // body text
	colMuted    = rgb{96, 107, 122}  // secondary text
	colFaint    = rgb{150, 159, 171} // axis labels, rules
	colRule     = rgb{214, 219, 226}
	colPanel    = rgb{245, 247, 250}
	colNavy     = rgb{27, 54, 93}
	colTeal     = rgb{22, 138, 154}
	colTealSoft = rgb{160, 214, 221}
	colTealDark = rgb{14, 96, 108}
	colLand     = rgb{228, 233, 239}
	colLandEdge = rgb{128, 141, 158}
	colWhite    = rgb{255, 255, 255}
	colNoData   = rgb{154, 163, 174}
	colNoDataBg = rgb{236, 239, 243}
	colFlag     = rgb{217, 140, 20}
	colFlagBg   = rgb{253, 246, 234}
)

// levels is the level scale of docs/api.md (Read a report) in order, with display names and
// colours. textOn is the text colour that stays readable on the fill.
var levels = []struct {
	key, label, rng string
	fill, textOn    rgb
}{
	{"very_low", "Very low", "0–19", rgb{26, 140, 80}, colWhite},
	{"low", "Low", "20–39", rgb{134, 196, 84}, colInk},
	{"moderate", "Moderate", "40–59", rgb{242, 190, 58}, colInk},
	{"high", "High", "60–79", rgb{230, 110, 32}, colWhite},
	{"very_high", "Very high", "80–100", rgb{200, 40, 32}, colWhite},
}

// levelStyle returns the label and colours of a level key; an unknown or
// empty key is shown in the neutral no-data grey rather than guessed.
func levelStyle(key string) (label string, fill, textOn rgb) {
	for _, l := range levels {
		if l.key == key {
			return l.label, l.fill, l.textOn
		}
	}
	if key == "" {
		return "No data", colNoData, colWhite
	}
	return humanize(key), colNoData, colWhite
}

// moduleLevel is the level a module is shown with: its own riskLevel, else
// the banding of its score that docs/api.md (Read a report) gives.
func moduleLevel(score *int, level *string) string {
	if level != nil && *level != "" {
		return *level
	}
	if score != nil {
		return risk.RiskLevel(*score)
	}
	return ""
}

// noDataTrack draws a bar track with no bar: hatched, with "No data" on a
// white label pad pad millimetres from its left end and inset from its top
// and bottom, never a bar at 0.
func (r *renderer) noDataTrack(x, y, w, h float64, font fontSpec, pad, inset float64) {
	r.hatch(x, y, w, h)
	r.setFont(font)
	tw := r.f.GetStringWidth("No data") + 2*pad
	r.fill(colWhite)
	r.f.Rect(x+pad, y+inset, tw, h-2*inset, "F")
	r.setInk(colMuted)
	r.cell(x+pad, y, tw, h, "No data", "C")
}

// moduleTitle is the display name of a module key, from the registry.
func moduleTitle(key string) string {
	if t := risk.ModuleTitle(key); t != key {
		return t
	}
	return humanize(key)
}

// moduleScore is one module's summary score with its key.
type moduleScore struct {
	key   string
	score *int
}

// moduleScoreList pairs the summary's module scores with their keys in
// report order: every registry module, one missing from the report as no
// data (never dropped), then any module the registry does not know.
func moduleScoreList(s *risk.ModuleScores) []moduleScore {
	keys := moduleOrder(*s)
	out := make([]moduleScore, 0, len(keys))
	for _, k := range keys {
		v, _ := s.Get(k)
		out = append(out, moduleScore{k, v})
	}
	return out
}

// moduleOrder is the order modules are drawn in: the registry's modules,
// whether or not the report has them, then the report's other keys in its
// own order.
func moduleOrder[T any](b risk.ByModule[T]) []string {
	keys := risk.ModuleKeys()
	for _, e := range b {
		if !slices.Contains(keys, e.Module) {
			keys = append(keys, e.Module)
		}
	}
	return keys
}

// returnPeriodText writes a return period as "about 1 in 240 years", or ""
// where there is none.
func returnPeriodText(years *float64) string {
	if years == nil || math.IsNaN(*years) || math.IsInf(*years, 0) || *years <= 0 {
		return ""
	}
	return "about 1 in " + hazard.ReturnPeriodText(*years) + " years"
}

// chanceText is a peril's return period with the event it is for: "about
// 1 in 580 years: an EF2+ tornado path crossing the site".
func chanceText(p risk.Peril) string {
	t := returnPeriodText(p.ReturnPeriodYears)
	if t != "" && p.ChanceOf != "" {
		t += ": " + p.ChanceOf
	}
	return t
}

func basisLabel(b string) string {
	switch b {
	case "hazard_data":
		return "Hazard data"
	case "nri_fallback":
		return "FEMA NRI county fallback"
	case "no_data", "":
		return "No data"
	}
	return humanize(b)
}

func priorityStyle(p string) (label string, fill, textOn rgb) {
	switch p {
	case "high":
		return "High", rgb{200, 40, 32}, colWhite
	case "medium":
		return "Medium", rgb{242, 190, 58}, colInk
	case "low":
		return "Low", rgb{214, 226, 240}, colNavy
	case "":
		return "Action", colNoDataBg, colInk
	}
	return humanize(p), colNoDataBg, colInk
}

func confidenceText(c risk.Confidence) string {
	lvl := humanize(c.Level)
	if lvl == "" {
		lvl = "Not stated"
	}
	if math.IsNaN(c.Score) || math.IsInf(c.Score, 0) {
		return lvl
	}
	return lvl + " (" + strconv.FormatFloat(c.Score, 'f', 2, 64) + ")"
}

// humanize turns a machine key (very_high, severeWeather) into words.
func humanize(key string) string {
	if key == "" {
		return ""
	}
	var b strings.Builder
	for i, r := range key {
		switch {
		case r == '_' || r == '-':
			b.WriteByte(' ')
		case r >= 'A' && r <= 'Z' && i > 0:
			b.WriteByte(' ')
			b.WriteRune(r + ('a' - 'A'))
		default:
			b.WriteRune(r)
		}
	}
	s := b.String()
	if c := s[0]; c >= 'a' && c <= 'z' {
		s = string(c-('a'-'A')) + s[1:]
	}
	return s
}

// formatCoord writes a coordinate as unsigned degrees with a hemisphere
// letter; four decimals is about 10 m, finer than any layer we read.
func formatCoord(lat, lon float64) string {
	ns, ew := "N", "E"
	if lat < 0 {
		ns = "S"
	}
	if lon < 0 {
		ew = "W"
	}
	return strconv.FormatFloat(math.Abs(lat), 'f', 4, 64) + "° " + ns + ", " +
		strconv.FormatFloat(math.Abs(lon), 'f', 4, 64) + "° " + ew
}

// formatNumber shows about three significant digits, integers as integers
// and large values with thousands separators.
func formatNumber(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	a := math.Abs(v)
	var s string
	switch {
	case v == math.Trunc(v) && a < 1e15:
		return groupThousands(strconv.FormatFloat(v, 'f', 0, 64))
	case a >= 1000:
		return groupThousands(strconv.FormatFloat(math.Round(v), 'f', 0, 64))
	case a >= 100:
		s = strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		s = strconv.FormatFloat(v, 'f', 2, 64)
	case a >= 1e-4:
		dec := 2 - int(math.Floor(math.Log10(a)))
		s = strconv.FormatFloat(v, 'f', dec, 64)
	default:
		return strconv.FormatFloat(v, 'e', 2, 64)
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func groupThousands(s string) string {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	if len(s) <= 3 {
		if neg {
			return "-" + s
		}
		return s
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	head := len(s) % 3
	if head > 0 {
		b.WriteString(s[:head])
	}
	for i := head; i < len(s); i += 3 {
		if b.Len() > 0 && !(neg && b.Len() == 1) {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// indicatorValue is what the Value column shows: the indicator's wording
// where it has one (a name, "none within 100 km", FEMA's "Not
// Applicable"), else its number with the unit, else a dash.
func indicatorValue(in risk.Indicator) string {
	switch {
	case in.Text != nil && *in.Text != "":
		return *in.Text
	case in.Value == nil:
		return formatValue(nil, in.Unit)
	}
	return formatValue(*in.Value, in.Unit)
}

// formatValue renders an indicator value with its unit. Values arrive as Go
// numbers from the engine or as JSON-decoded numbers from storage.
func formatValue(v any, unit string) string {
	var s string
	numeric := true
	switch x := v.(type) {
	case nil:
		return "–"
	case float64:
		s = formatNumber(x)
	case float32:
		s = formatNumber(float64(x))
	case int:
		s = formatNumber(float64(x))
	case int64:
		s = formatNumber(float64(x))
	case int32:
		s = formatNumber(float64(x))
	case json.Number:
		if f, err := x.Float64(); err == nil {
			s = formatNumber(f)
		} else {
			s, numeric = x.String(), false
		}
	case string:
		s, numeric = x, false
	case bool:
		s, numeric = "No", false
		if x {
			s = "Yes"
		}
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return "–"
		}
		s, numeric = string(b), false
	}
	if !numeric || unit == "" {
		return s
	}
	switch unit {
	case "percent", "%":
		return s + "%"
	case "count", "score", "score 0-100", "index":
		// The label already names what is counted, scored or indexed
		// ("0.61 index" is not said).
		return s
	case "probability":
		// A chance reads better as a percentage than as 2.5e-05; a zero
		// chance is none on record, never "0%".
		if f, ok := toFloat(v); ok {
			if f == 0 {
				return "none on record"
			}
			return formatNumber(f*100) + "%"
		}
	case "category":
		// Said "category 4", not "4 category". The one indicator in this
		// unit, the strongest hurricane within 100 km, is 0 when no storm
		// of hurricane strength passed there in the records
		// (docs/methodology.md): no category, none on record.
		if f, ok := toFloat(v); ok && f == 0 {
			return "none on record"
		}
		return "category " + s
	case "class", "magnitude":
		return unit + " " + s
	case "degrees":
		if s == "1" {
			return "1 degree"
		}
	}
	return s + " " + unitText(unit)
}

// superscriptUnit finds a length unit with a power: km2, m3, ft2.
var superscriptUnit = regexp.MustCompile(`\b(km|cm|mm|m|mi|ft)([23])\b`)

// unitText is a unit as the report prints it: areas and volumes with
// superscripts ("residents per km²"), as in the rest of its text.
func unitText(unit string) string {
	return superscriptUnit.ReplaceAllStringFunc(unit, func(u string) string {
		if strings.HasSuffix(u, "2") {
			return u[:len(u)-1] + "²"
		}
		return u[:len(u)-1] + "³"
	})
}

// toFloat is a numeric indicator value as a float64.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// ordinal writes a national percentile as "87th".
func ordinal(p float64) string {
	n := int(math.Floor(p + 1e-9)) // down, like every percentile the report states
	suf := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suf = "st"
		case 2:
			suf = "nd"
		case 3:
			suf = "rd"
		}
	}
	return strconv.Itoa(n) + suf
}
