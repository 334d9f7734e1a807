package wildfire

import (
	"fmt"
	"io/fs"

	"github.com/locrisk/locrisk/internal/risk/data"
)

// futureCols are the NRI Future Risk projected wildfire risk index scores,
// in the order of the future* arrays below.
var futureCols = [4]string{
	"WFIR_MID_LOWER_PRISKS",
	"WFIR_MID_HIGHER_PRISKS",
	"WFIR_LATE_LOWER_PRISKS",
	"WFIR_LATE_HIGHER_PRISKS",
}

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

func loadFuture(fsys fs.FS) (map[int]futureRow, int, error) {
	t, err := data.OpenTable(fsys, data.Path(SourceFuture), append([]string{"STCOFIPS"}, futureCols[:]...)...)
	if err != nil {
		return nil, 0, fmt.Errorf("wildfire: %w", err)
	}
	defer t.Close()
	out := make(map[int]futureRow, 3300)
	for t.Scan() {
		n, err := countyKey(t, "STCOFIPS")
		if err != nil {
			return nil, 0, err
		}
		if _, dup := out[n]; dup {
			return nil, 0, fmt.Errorf("wildfire: %w", t.Errorf("county %s appears twice", t.String("STCOFIPS")))
		}
		var r futureRow
		for i, col := range futureCols {
			v, ok, err := rangedFloat(t, col, 0, 100)
			if err != nil {
				return nil, 0, err
			}
			if ok {
				r.score[i] = v
				r.has |= hasFuture0 << i
			}
		}
		if r.has != 0 {
			out[n] = r
		}
	}
	if err := t.Err(); err != nil {
		return nil, 0, fmt.Errorf("wildfire: %w", err)
	}
	if t.Rows() == 0 {
		return nil, 0, fmt.Errorf("wildfire: %s has no county rows", data.Path(SourceFuture))
	}
	return out, t.Rows(), nil
}
