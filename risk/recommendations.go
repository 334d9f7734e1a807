package risk

import "locrisk/risk/hazard"

// recommendationText holds, per module, the action for a high or very high
// score, for a moderate score, and for a module without data. Low scores get
// no recommendation: a report that recommends everything recommends nothing.
var recommendationText = map[string][3]string{
	hazard.Hydrology: {
		"Obtain the FEMA flood zone and an elevation certificate for the structure; price flood cover explicitly and check NFIP or private flood insurance is in force.",
		"Check the FEMA flood map for the parcel and confirm drainage and finished-floor elevation before binding.",
		"Flood hazard could not be assessed here; obtain the FEMA flood map and local flood history for the parcel.",
	},
	hazard.SevereWeather: {
		"Verify roof age, covering and wind-rated construction (hurricane straps, impact-rated openings where hurricanes occur); consider wind and hail deductibles.",
		"Confirm roof condition and age; note wind and hail exposure in the underwriting file.",
		"Severe weather could not be assessed here; review local storm history and building-code wind requirements.",
	},
	hazard.Wildfire: {
		"Require a defensible-space and ember-resistance inspection (vents, roof class, 0-5 ft zone) and check access for fire engines.",
		"Ask for vegetation clearance around the structure and a Class A roof; monitor local fire-risk ratings.",
		"Wildfire hazard could not be assessed here; check state or local wildfire hazard maps for the parcel.",
	},
	hazard.Earthquake: {
		"Obtain a structural review for seismic retrofit needs (soft storey, unreinforced masonry, foundation bolting) and quote earthquake cover separately.",
		"Check the building's construction type and year against seismic code eras; offer earthquake cover.",
		"Earthquake hazard could not be assessed here; consult the USGS hazard maps for the region.",
	},
	hazard.Landslide: {
		"Commission a geotechnical review of slope stability and drainage before binding; landslide damage is usually excluded from standard policies.",
		"Inspect the site for slopes, cut banks and drainage problems; note reported landslides nearby.",
		"Landslide hazard could not be assessed here; check state geological survey landslide maps.",
	},
	hazard.EnvironmentalExposure: {
		"Order a Phase I environmental site assessment; an active Superfund site within 1 km can affect the property's value, lending and liability.",
		"Review the nearby Superfund sites' status and any groundwater or vapour advisories before closing.",
		"Environmental exposure could not be assessed here; search EPA's site records for the area.",
	},
}

// lowConfidence is the module confidence below which a recommendation is
// never high priority.
const lowConfidence = 0.4

func recommendations(results []moduleResult) []Recommendation {
	out := []Recommendation{}
	for _, r := range results {
		texts := recommendationText[r.name]
		switch {
		case r.score == nil:
			out = append(out, Recommendation{Module: r.name, Priority: "medium", Text: texts[2]})
		case *r.score >= 60 && r.name == hazard.EnvironmentalExposure && !hasModuleFlag(r, "near_superfund_site"):
			// The proximity score saturates for any site within 5 km, since
			// most places have none; a Phase I assessment is asked for only
			// when an active site is within 1 km.
			out = append(out, Recommendation{Module: r.name, Priority: "medium", Text: texts[1]})
		case *r.score >= 60 && r.confidence < lowConfidence:
			// Weak evidence (reported events only, a county benchmark)
			// earns the strong action at medium priority, not high.
			out = append(out, Recommendation{Module: r.name, Priority: "medium", Text: texts[0]})
		case *r.score >= 60:
			out = append(out, Recommendation{Module: r.name, Priority: "high", Text: texts[0]})
		case *r.score >= 40:
			out = append(out, Recommendation{Module: r.name, Priority: "medium", Text: texts[1]})
		}
	}
	// High priority first; within a priority, report module order.
	rank := map[string]int{"high": 0, "medium": 1, "low": 2}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && rank[out[j].Priority] < rank[out[j-1].Priority]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func hasModuleFlag(r moduleResult, code string) bool {
	for _, f := range r.flags {
		if f.Code == code {
			return true
		}
	}
	return false
}
