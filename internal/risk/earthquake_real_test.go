package risk

import (
	"context"
	"slices"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data/datatest"
	"github.com/locrisk/locrisk/internal/risk/earthquake"
	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// TestRealEarthquakeEverywhere: through the engine, every state and
// territory gets an earthquake score from hazard data, with its resolution
// stated (docs/methodology.md, "Earthquake module"): the place-table PGA at
// listed places outside the conterminous states.
func TestRealEarthquakeEverywhere(t *testing.T) {
	e := loadReal(t)
	places := []struct {
		name     string
		lat, lon float64
	}{
		{"Anchorage, AK", 61.2181, -149.9003},
		{"Kodiak, AK", 57.7900, -152.4072},
		{"Fairbanks, AK", 64.8378, -147.7164},
		{"Juneau, AK", 58.3019, -134.4197},
		{"Honolulu, HI", 21.2793, -157.8292},
		{"Hilo, HI", 19.7241, -155.0868},
		{"San Juan, PR", 18.4655, -66.1057},
		{"Ponce, PR", 18.0111, -66.6141},
		{"Mayagüez, PR", 18.2013, -67.1397},
		{"Charlotte Amalie, VI", 18.3419, -64.9307},
		{"Christiansted, VI", 17.7466, -64.7032},
		{"Hagåtña, GU", 13.4757, 144.7489},
		{"Saipan, MP", 15.2069, 145.7197},
		{"Pago Pago, AS", -14.2781, -170.7025},
	}
	for _, p := range places {
		a, err := e.Assess(context.Background(), p.lat, p.lon)
		if err != nil {
			t.Errorf("%s: %v", p.name, err)
			continue
		}
		s, _ := a.Summary.ModuleScores.Get(hazard.Earthquake)
		m, _ := a.Report.Modules.Get(hazard.Earthquake)
		if s == nil || m.Basis != "hazard_data" {
			t.Errorf("%s: earthquake score %v, basis %s; want a score from hazard data", p.name, s, m.Basis)
			continue
		}
		i := slices.IndexFunc(m.Indicators, func(in Indicator) bool { return in.ID == earthquake.IndicatorPGA })
		if i < 0 || m.Indicators[i].Resolution != hazard.ResPlaceTable || m.Indicators[i].Percentile == nil || m.Indicators[i].ResolutionDetail == "" {
			t.Errorf("%s: PGA indicator %+v, want one from the place table with a percentile and a detail", p.name, m.Indicators)
			continue
		}
		t.Logf("%-22s earthquake %3d (confidence %.2f)  PGA %.3f g, percentile %.1f; %s", p.name, *s, m.Confidence.Score,
			*m.Indicators[i].Value, *m.Indicators[i].Percentile, m.Indicators[i].ResolutionDetail)
		checkInvariants(t, a)
	}

	// Every state's county interior points: how many have an earthquake
	// score, and from what.
	byState := map[string][3]int{} // hazard data, NRI benchmark, null
	for _, s := range datatest.GazetteerSites(t, datatest.Real(t)) {
		a, err := e.Assess(context.Background(), s.Lat, s.Lon)
		if err != nil {
			continue // a generalised-coastline miss; coverage has its own tests
		}
		m, _ := a.Report.Modules.Get(hazard.Earthquake)
		c := byState[s.StateCode]
		switch m.Basis {
		case "hazard_data":
			c[0]++
		case "nri_fallback":
			c[1]++
		default:
			c[2]++
			t.Logf("no earthquake score at the interior point of %s (%s)", s.CountyFIPS, s.StateCode)
		}
		byState[s.StateCode] = c
	}
	for st, c := range byState {
		if c[0] == 0 {
			t.Errorf("%s: no county interior point scored from hazard data (%v)", st, c)
		}
		if !s2conus(st) {
			t.Logf("%s: county interior points from hazard data %d, NRI benchmark %d, null %d", st, c[0], c[1], c[2])
		}
	}
}

func s2conus(st string) bool { return st != "AK" && st != "HI" && st != "PR" }
