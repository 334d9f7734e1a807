package risk

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestExploreV3(t *testing.T) {
	e := loadReal(t)
	var places [][3]any
	for _, ln := range strings.Split(os.Getenv("PLACES"), ";") {
		var n string
		var la, lo float64
		f := strings.Split(ln, ",")
		if len(f) != 3 {
			continue
		}
		n = f[0]
		fmt.Sscan(f[1], &la)
		fmt.Sscan(f[2], &lo)
		places = append(places, [3]any{n, la, lo})
	}
	mod := os.Getenv("MODULE")
	for _, p := range places {
		a, err := e.Assess(context.Background(), p[1].(float64), p[2].(float64))
		if err != nil {
			fmt.Println(p[0], err)
			continue
		}
		if m, ok := a.Report.Modules.Get(mod); ok {
			if ind := os.Getenv("IND"); ind != "" {
				fmt.Printf("%-22s %s score=%v", p[0], a.Location.CountyFIPS, *m.Score)
				for _, in := range m.Indicators {
					if strings.Contains(ind, in.ID) && in.Value != nil {
						pc := -1.0
						if in.Percentile != nil {
							pc = *in.Percentile
						}
						fmt.Printf(" %s=%.4g(p%.1f)", in.ID, *in.Value, pc)
					}
				}
				fmt.Println()
				if os.Getenv("NARR") != "" {
					fmt.Println("   ", m.Narrative)
				}
				continue
			}
			for i := range m.Indicators {
				m.Indicators[i].Label = ""
			}
			b, _ := json.Marshal(m)
			s := string(b)
			if len(s) > 3000 {
				s = s[:3000]
			}
			fmt.Printf("%s: %s\n\n", p[0], s)
		}
	}
}
