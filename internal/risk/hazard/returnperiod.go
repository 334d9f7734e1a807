package hazard

import (
	"math"
	"strconv"
)

// ReturnPeriodText writes a return period in years for a sentence, to two
// significant digits with thousands separators: "7.6", "18", "1,300". Every
// narrative, the PDF and the command line write return periods with it.
func ReturnPeriodText(years float64) string {
	if years < 10 {
		return strconv.FormatFloat(math.Round(years*10)/10, 'f', -1, 64)
	}
	mag := math.Pow(10, math.Floor(math.Log10(years))-1)
	n := strconv.FormatInt(int64(math.Round(years/mag)*mag), 10)
	for i := len(n) - 3; i > 0; i -= 3 {
		n = n[:i] + "," + n[i:]
	}
	return n
}
