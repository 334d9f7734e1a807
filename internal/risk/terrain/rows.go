package terrain

// Rows is what Load read of each source, counted as the manifest counts
// them: the tiles of the SRTM30_PLUS mosaic the pack holds, and the
// ETOPO5 grid points of every block.
func (m *Model) Rows() map[string]int {
	tiles := 0
	for _, held := range m.have {
		if held {
			tiles++
		}
	}
	points := 0
	for _, b := range m.etopo {
		points += b.Rows * b.Cols
	}
	return map[string]int{SourceSRTM: tiles, SourceETOPO5: points}
}
