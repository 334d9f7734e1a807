package locrisk

import (
	"time"
)

// RequestCounts are request outcomes with a latency histogram. Latency[i]
// counts requests in bucket i of the caller's bucket bounds (the server's
// latencyBucketsMs); the store only adds histograms element by element, so
// the bounds must stay fixed for the life of a database. The counters
// carry the column names of a store's request_stats table; the histogram
// is stored as JSON (ParseLatencyHistogram).
type RequestCounts struct {
	Total        int64   `db:"total"`
	Succeeded    int64   `db:"succeeded"`     // status 1xx-3xx
	ClientErrors int64   `db:"client_errors"` // 4xx, 429s included
	ServerErrors int64   `db:"server_errors"` // 5xx
	RateLimited  int64   `db:"rate_limited"`  // 429 rate_limit_exceeded
	Latency      []int64 `db:"-"`
}

// Add adds o to c; histograms of different lengths add as if the shorter
// were padded with zeros.
func (c *RequestCounts) Add(o RequestCounts) {
	c.Total += o.Total
	c.Succeeded += o.Succeeded
	c.ClientErrors += o.ClientErrors
	c.ServerErrors += o.ServerErrors
	c.RateLimited += o.RateLimited
	if len(o.Latency) > len(c.Latency) {
		c.Latency = append(c.Latency, make([]int64, len(o.Latency)-len(c.Latency))...)
	}
	for i, n := range o.Latency {
		c.Latency[i] += n
	}
}

// HourStats is one account's requests in one UTC hour.
type HourStats struct {
	AccountID string
	Hour      time.Time // start of the hour; other times are truncated to it
	RequestCounts
}
