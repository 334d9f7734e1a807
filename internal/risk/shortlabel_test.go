package risk

import "testing"

func TestShortLabel(t *testing.T) {
	cases := []struct{ label, want string }{
		{"Relief above the plains: the local relief within 5 km less 100 m", "Relief above the plains"},
		{"Annual burn probability of a home at the site: the means of the county's exposure classes (USFS Wildfire Risk to Communities, 2020)",
			"Annual burn probability of a home at the site"},
		// A colon inside parentheses belongs to the parenthesis.
		{"Steepest ground slope within 2 km, on a terrain grid of about 2 km (which smooths slopes: 3 degrees is a mountain front or canyon side)",
			"Steepest ground slope within 2 km, on a terrain grid of about 2 km"},
		// A colon after a parenthesis introduces what it names.
		{"FEMA NRI Future Risk projection (2024): wildfire risk score, mid-century, lower warming",
			"FEMA NRI Future Risk projection (2024): wildfire risk score, mid-century, lower warming"},
		{"Annual chance of an M5+ earthquake within 50 km (from declustered historical seismicity)",
			"Annual chance of an M5+ earthquake within 50 km"},
		{"Hurricanes within 100 km", "Hurricanes within 100 km"},
		{"Ratio 1:2 of something", "Ratio 1:2 of something"},
		{"", ""},
	}
	for _, c := range cases {
		if got := shortLabel(c.label); got != c.want {
			t.Errorf("shortLabel(%q) = %q, want %q", c.label, got, c.want)
		}
	}
}
