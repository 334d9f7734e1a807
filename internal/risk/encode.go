package risk

import "encoding/json"

// AppendJSON appends a's JSON to b: byte for byte what json.Marshal(a)
// writes, at about a third of its cost. encoding/json re-reads the output of
// every json.Marshaler to check and compact it, and ByModule is one that
// holds most of a report (the modules' full results, 30 kB of a 40 kB
// body), so json.Marshal(a) reads those bytes twice. Here the objects that
// hold ByModule values are laid out by hand and every other value goes
// through json.Marshal, which never meets a Marshaler inside them. The
// scheduler encodes each report with it (docs/performance.md, The whole
// path); TestAppendJSONMatchesMarshal holds it to json.Marshal on the
// fixtures and the real data, so a field added to these types without a
// line here fails that test.
func (a *Assessment) AppendJSON(b []byte) ([]byte, error) {
	w := jsonWriter{b: b}
	w.raw(`{"location":`)
	w.value(a.Location)
	w.raw(`,"dataVersion":`)
	w.value(a.DataVersion)
	w.raw(`,"summary":`)
	a.Summary.appendJSON(&w)
	w.raw(`,"report":`)
	a.Report.appendJSON(&w)
	if a.Provenance != nil {
		w.raw(`,"provenance":`)
		w.value(a.Provenance)
	}
	w.raw(`}`)
	return w.b, w.err
}

func (s *Summary) appendJSON(w *jsonWriter) {
	w.raw(`{"overallScore":`)
	w.value(s.OverallScore)
	w.raw(`,"riskLevel":`)
	w.value(s.RiskLevel)
	if s.OverallDriver != "" {
		w.raw(`,"overallDriver":`)
		w.value(s.OverallDriver)
	}
	w.raw(`,"confidence":`)
	w.value(s.Confidence)
	w.raw(`,"moduleScores":`)
	appendByModule(w, s.ModuleScores)
	w.raw(`,"perils":`)
	appendByModule(w, s.Perils)
	w.raw(`,"topRisks":`)
	w.value(s.TopRisks)
	w.raw(`,"recommendations":`)
	w.value(s.Recommendations)
	w.raw(`,"reviewFlags":`)
	w.value(s.ReviewFlags)
	w.raw(`,"links":`)
	w.value(s.Links)
	appendOutlook(w, s.Outlook, s.OutlookUnavailable)
	w.raw(`}`)
}

func (f *Full) appendJSON(w *jsonWriter) {
	w.raw(`{"modules":`)
	appendByModule(w, f.Modules)
	w.raw(`,"sources":`)
	w.value(f.Sources)
	w.raw(`,"methodology":`)
	w.value(f.Methodology)
	appendOutlook(w, f.Outlook, f.OutlookUnavailable)
	w.raw(`}`)
}

// appendOutlook writes the outlook members as their tags do: absent when
// not recorded, the value or null, and why it is null.
func appendOutlook[T any](w *jsonWriter, o Recorded[T], why *OutlookUnavailable) {
	if o.Set {
		w.raw(`,"outlook":`)
		w.value(o.Value)
	}
	if why != nil {
		w.raw(`,"outlookUnavailable":`)
		w.value(why)
	}
}

// appendByModule writes m as ByModule.MarshalJSON does.
func appendByModule[T any](w *jsonWriter, m ByModule[T]) {
	w.raw(`{`)
	for i, e := range m {
		if i > 0 {
			w.raw(`,`)
		}
		w.value(e.Module)
		w.raw(`:`)
		w.value(e.Value)
	}
	w.raw(`}`)
}

// jsonWriter appends JSON to b and keeps the first error.
type jsonWriter struct {
	b   []byte
	err error
}

func (w *jsonWriter) raw(s string) { w.b = append(w.b, s...) }

func (w *jsonWriter) value(v any) {
	if w.err != nil {
		return
	}
	j, err := json.Marshal(v)
	if err != nil {
		w.err = err
		return
	}
	w.b = append(w.b, j...)
}
