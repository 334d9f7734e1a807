package terrain

import (
	"math"
	"slices"
	"testing"

	"github.com/locrisk/locrisk/internal/risk/data/datatest"
)

// knownPlaces are towns and landmarks in rugged terrain with their
// elevation in metres. The elevations are written from general knowledge
// of the published town elevations (USGS GNIS-style values, the figure a
// town gives for itself), not looked up in any data set of this
// repository; each is believed right to about ±30 m, and coordinates to
// about a kilometre. A town on a narrow ridge or in a narrow valley
// cannot match a 2 km grid: the test compares grids with each other at
// these places, not with a tolerance per place.
var knownPlaces = []struct {
	name     string
	lat, lon float64
	metres   float64
}{
	// Cumberland Plateau and the Tennessee valley
	{"Lookout Mountain, TN", 34.9958, -85.3472, 600},
	{"Signal Mountain, TN", 35.1223, -85.3433, 610},
	{"Chattanooga, TN", 35.0456, -85.3097, 206},
	{"Monteagle, TN", 35.2390, -85.8397, 590},
	{"Sewanee, TN", 35.2031, -85.9211, 585},
	{"Crossville, TN", 35.9489, -85.0269, 570},
	// Blue Ridge and the Appalachian plateaus
	{"Gatlinburg, TN", 35.7143, -83.5102, 393},
	{"Asheville, NC", 35.5951, -82.5515, 650},
	{"Boone, NC", 36.2168, -81.6746, 1016},
	{"Blowing Rock, NC", 36.1351, -81.6779, 1093},
	{"Highlands, NC", 35.0526, -83.1968, 1255},
	{"Beech Mountain, NC", 36.1932, -81.8823, 1678},
	{"Blacksburg, VA", 37.2296, -80.4139, 634},
	{"Roanoke, VA", 37.2710, -79.9414, 287},
	{"Beckley, WV", 37.7782, -81.1882, 735},
	{"Bluefield, WV", 37.2698, -81.2223, 790},
	{"Charleston, WV", 38.3498, -81.6326, 183},
	{"Elkins, WV", 38.9262, -79.8467, 590},
	// Ozarks and Ouachitas
	{"Fayetteville, AR", 36.0626, -94.1574, 427},
	{"Springfield, MO", 37.2090, -93.2923, 396},
	{"Hot Springs, AR", 34.5037, -93.0552, 182},
	// Rockies, Colorado Plateau
	{"Denver, CO", 39.7392, -104.9903, 1609},
	{"Boulder, CO", 40.0150, -105.2705, 1640},
	{"Golden, CO", 39.7555, -105.2211, 1730},
	{"Colorado Springs, CO", 38.8339, -104.8214, 1839},
	{"Manitou Springs, CO", 38.8597, -104.9172, 1940},
	{"Leadville, CO", 39.2508, -106.2925, 3094},
	{"Breckenridge, CO", 39.4817, -106.0384, 2926},
	{"Aspen, CO", 39.1911, -106.8175, 2408},
	{"Vail, CO", 39.6403, -106.3742, 2484},
	{"Estes Park, CO", 40.3772, -105.5217, 2293},
	{"Telluride, CO", 37.9375, -107.8123, 2667},
	{"Silverton, CO", 37.8119, -107.6645, 2836},
	{"Durango, CO", 37.2753, -107.8801, 1988},
	{"Glenwood Springs, CO", 39.5505, -107.3248, 1756},
	{"Salt Lake City, UT", 40.7608, -111.8910, 1288},
	{"Park City, UT", 40.6461, -111.4980, 2134},
	{"Jackson, WY", 43.4799, -110.7624, 1901},
	{"Santa Fe, NM", 35.6870, -105.9378, 2194},
	{"Flagstaff, AZ", 35.1983, -111.6513, 2106},
	{"Missoula, MT", 46.8721, -113.9940, 978},
	{"Moab, UT", 38.5733, -109.5498, 1227},
	{"Grand Canyon Village, AZ", 36.0544, -112.1401, 2100},
	{"Phantom Ranch, AZ", 36.1059, -112.0947, 750},
	{"Springdale, UT", 37.1889, -112.9986, 1190},
	{"Lewiston, ID", 46.4165, -117.0177, 227},
	// Sierra Nevada
	{"South Lake Tahoe, CA", 38.9399, -119.9772, 1900},
	{"Truckee, CA", 39.3280, -120.1833, 1773},
	{"Mammoth Lakes, CA", 37.6485, -118.9721, 2402},
	{"Bishop, CA", 37.3635, -118.3951, 1265},
	{"Lone Pine, CA", 36.6060, -118.0629, 1136},
	{"Yosemite Village, CA", 37.7456, -119.5936, 1209},
	// Cascades
	{"Leavenworth, WA", 47.5962, -120.6615, 357},
	{"Paradise, Mt. Rainier, WA", 46.7860, -121.7353, 1646},
	{"Bend, OR", 44.0582, -121.3153, 1104},
	{"Klamath Falls, OR", 42.2249, -121.7817, 1250},
}

// knownErrors is the absolute error at each known place of a mosaic read
// bilinearly (at) and of ETOPO5, and the median of each.
func knownErrors(m *Model, at func(r, c int) (float64, bool)) (grid, etopo []float64, medGrid, medEtopo float64) {
	for _, p := range knownPlaces {
		x, y := mosaicXY(p.lat, p.lon)
		v, _ := bilinear(y, x, mosaicH, mosaicW, at)
		e, _ := m.etopoElevation(p.lat, p.lon)
		grid = append(grid, math.Abs(v-p.metres))
		etopo = append(etopo, math.Abs(e-p.metres))
	}
	med := func(v []float64) float64 {
		s := slices.Clone(v)
		slices.Sort(s)
		return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
	}
	return grid, etopo, med(grid), med(etopo)
}

// rawAt reads a raw mosaic as bilinear wants it.
func rawAt(raw []int32) func(r, c int) (float64, bool) {
	return func(r, c int) (float64, bool) {
		v := raw[r*mosaicW+c]
		return float64(v), v != rawMixed && v != rawMissing
	}
}

// TestKnownElevations: at towns in rugged terrain with known elevations,
// the repair does not make the tiles worse (median absolute error), and on
// the ridge tops of Lookout and Signal Mountain it leaves the ridge
// readings standing.
func TestKnownElevations(t *testing.T) {
	m := realModel(t)
	raw := rawMosaic(t, datatest.Real(t))
	errRaw, errEtopo, medRaw, medEtopo := knownErrors(m, rawAt(raw))
	errRep, _, medRep, _ := knownErrors(m, m.srtmAt)
	worse := 0
	for i, p := range knownPlaces {
		t.Logf("%-26s %5.0f m: off by %4.0f raw, %4.0f repaired, %4.0f ETOPO5", p.name, p.metres, errRaw[i], errRep[i], errEtopo[i])
		if errRep[i] > errRaw[i]+50 {
			worse++
		}
	}
	t.Logf("median absolute error at %d places: raw %.0f m, repaired %.0f m, ETOPO5 %.0f m; repaired worse than raw by > 50 m at %d", len(knownPlaces), medRaw, medRep, medEtopo, worse)
	if medRep > medRaw {
		t.Errorf("the repair moves the median error at known places from %.0f m to %.0f m", medRaw, medRep)
	}
	if worse > len(knownPlaces)/10 {
		t.Errorf("the repair is worse than the raw tiles by more than 50 m at %d of %d places", worse, len(knownPlaces))
	}
	// The ridge cells of Lookout Mountain (raw 584-631 m, the valleys on
	// either side about 200 m): the repair keeps them within 128 m of
	// the raw reading and above 450 m.
	for _, p := range []struct {
		name     string
		lat, lon float64
	}{{"Lookout Mountain", 34.9958, -85.3472}, {"Signal Mountain", 35.1223, -85.3433}} {
		x, y := mosaicXY(p.lat, p.lon)
		cx, cy := int(math.Round(x)), int(math.Round(y))
		n := 0
		for dy := -3; dy <= 3; dy++ {
			for dx := -3; dx <= 3; dx++ {
				i := (cy+dy)*mosaicW + cx + dx
				if raw[i] < 550 {
					continue
				}
				n++
				if got := int32(m.srtm[i]); got < 450 || abs32(got-raw[i]) > 128 {
					t.Errorf("%s: ridge pixel (%+d, %+d) reads %d m raw, %d m repaired", p.name, dx, dy, raw[i], got)
				}
			}
		}
		if n < 3 {
			t.Errorf("%s: %d ridge pixels near the town", p.name, n)
		}
	}
}
