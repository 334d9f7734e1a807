package wildfire

import (
	"math"
	"strconv"

	"github.com/locrisk/locrisk/internal/risk/hazard"
)

// classNotesFor writes the narrative of a site allocated to class: what
// the class is and its chance, then the county's own notes.
func classNotesFor(c *county, class int, mixed bool) []string {
	r := c.wrc
	s := "By its shelter from wildland (local population density, and relief nearby), the site ranks among the county's " + pct(r.classFrac[class]) + " of homes that USFS Wildfire Risk to Communities (2020) counts as " + classWords[class] + " to wildfire"
	switch {
	case class == classNot:
		s += " (beyond the reach of embers from burnable land), which WRC gives no burn probability; the county's most sheltered residents are placed in this class first."
	case r.classBP[class] > 0:
		s += "; their mean annual burn probability is about 1 in " + hazard.ReturnPeriodText(1/r.classBP[class]) + "."
	default:
		s += "; their modelled burn probability is zero."
	}
	s += " Shelter is a proxy for the class, not a map of burnable land, so the site's values weigh the classes of the county's residents within a tenth of its rank either way"
	if mixed {
		s += "; this site ranks close enough to another class that its values weigh that class in too"
	}
	s += ": an allocation of county figures, not a measurement at the parcel."
	// The county's own notes are shared, not written again per class.
	notes := append([]string{s}, c.notes...)
	return notes[:len(notes):len(notes)]
}

// pct writes a share (0..1) as a whole percent, "less than 1%" below 0.5%.
func pct(f float64) string {
	if f > 0 && f < 0.005 {
		return "less than 1%"
	}
	return strconv.FormatFloat(100*f, 'f', 0, 64) + "%"
}

// notesFor writes the county's narrative sentences once, at load.
func notesFor(c *county, oldCounty string) []string {
	var notes []string
	if c.has&hasBP != 0 {
		notes = append(notes, burnProbabilityNote(c.wrc))
	} else {
		notes = append(notes, "USFS Wildfire Risk to Communities (2020) gives no figures for this county's homes, so no wildfire measure taken where its homes are scores this site; the values shown are county context.")
	}
	if c.has&hasWHP2020 != 0 {
		notes = append(notes, whpNote(c.whp2020))
	}
	if oldCounty != "" {
		notes = append(notes, "The wildfire tables predate this county's current boundaries; the values shown are those of the former "+oldCounty+", which covers most of it.")
	}
	return notes[:len(notes):len(notes)]
}

const wrcCite = " (USFS Wildfire Risk to Communities, 2020)."

// burnProbabilityNote states the burn probability of the exposed homes and
// what it is over all the county's homes, both county figures.
func burnProbabilityNote(r wrcRow) string {
	if r.bp <= 0 {
		return "The modelled annual burn probability of the county's homes is zero" + wrcCite
	}
	s := "Across the county's homes exposed to wildfire (" + homesPhrase(r.exposedFrac) + "), the mean annual burn probability is " +
		sigFigs(100*r.bp, 2) + "%"
	if r.bp < 0.5 {
		s += ", about a 1-in-" + hazard.ReturnPeriodText(1/r.bp) + " chance each year"
	}
	if r.exposedFrac < 1 && r.homesShare > 0 {
		s += "; averaged over all its homes, exposed or not, about 1 in " + hazard.ReturnPeriodText(1/r.homesShare)
	}
	return s + wrcCite
}

// homesPhrase says what share of the county's homes are exposed.
func homesPhrase(f float64) string {
	switch {
	case f >= 1:
		return "all of its homes"
	case f >= 0.995:
		return "nearly all of its homes"
	case f < 0.005:
		return "less than 1% of its homes"
	}
	return strconv.FormatFloat(100*f, 'f', 0, 64) + "% of its homes"
}

func whpNote(share float64) string {
	const tail = " of the county's area is rated high or very high Wildfire Hazard Potential (USFS, 2020); that share counts wild land anywhere in the county, not only where its homes are, and does not drive the score."
	switch {
	case share <= 0:
		return "None" + tail
	case share < 0.5:
		return "Less than 1%" + tail
	}
	return strconv.FormatFloat(share, 'f', 0, 64) + "%" + tail
}

// sigFigs formats v (> 0) with n significant digits and no exponent.
func sigFigs(v float64, n int) string {
	dec := n - 1 - int(math.Floor(math.Log10(v)))
	if dec < 0 {
		dec = 0
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}
