package wildfire

import (
	"github.com/locrisk/locrisk/internal/risk/data"
	"github.com/locrisk/locrisk/internal/risk/futurerisk"
)

// futureScenarios are the NRI Future Risk scenarios of the projected
// wildfire risk index scores, in the order of the future* arrays below.
var futureScenarios = [4]int{futurerisk.MidLower, futurerisk.MidHigher, futurerisk.LateLower, futurerisk.LateHigher}

var futureIDs = [4]string{IDFutureMidLower, IDFutureMidHigher, IDFutureLateLower, IDFutureLateHigher}

var futureLabels = [4]string{
	"FEMA NRI Future Risk projection (2024): wildfire risk score, mid-century, lower warming",
	"FEMA NRI Future Risk projection (2024): wildfire risk score, mid-century, higher warming",
	"FEMA NRI Future Risk projection (2024): wildfire risk score, late century, lower warming",
	"FEMA NRI Future Risk projection (2024): wildfire risk score, late century, higher warming",
}

type futureRow struct {
	score [4]float64
	has   uint16
}

// futureScores takes the projected wildfire scores of every county that
// has one from the Future Risk table, which the engine reads once for the
// module and the outlook.
func futureScores(tab *futurerisk.Table) map[int]futureRow {
	out := make(map[int]futureRow, tab.Rows())
	for _, c := range tab.Counties() {
		var r futureRow
		for i, s := range futureScenarios {
			if p := c.Hazards[futurerisk.Wildfire].Scenarios[s]; p.HasScore {
				r.score[i] = p.Score
				r.has |= hasFuture0 << i
			}
		}
		if r.has != 0 {
			out[data.FIPSNumber(c.FIPS)] = r
		}
	}
	return out
}
