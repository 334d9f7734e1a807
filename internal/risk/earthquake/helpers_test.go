package earthquake

import "github.com/locrisk/locrisk/internal/risk/hazard"

// indicator returns the indicator with id from m.
func indicator(m hazard.Measurement, id string) (hazard.Indicator, bool) {
	for _, in := range m.Indicators {
		if in.ID == id {
			return in, true
		}
	}
	return hazard.Indicator{}, false
}
