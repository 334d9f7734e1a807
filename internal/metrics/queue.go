package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/locrisk/locrisk"
)

// queueCollector reads the queue gauges at scrape time: one read of a few
// index ranges (locrisk.QueueDepth), bounded by a timeout, so a scrape
// neither keeps counters in step with every job transition nor waits long
// on a busy database.
type queueCollector struct {
	src     locrisk.QueueStats
	timeout time.Duration
	now     func() time.Time
	log     *slog.Logger

	depth, oldest, deliveries *prometheus.Desc
}

func newQueueCollector(src locrisk.QueueStats, timeout time.Duration, now func() time.Time, log *slog.Logger) *queueCollector {
	return &queueCollector{src: src, timeout: timeout, now: now, log: log,
		depth: prometheus.NewDesc(prometheus.BuildFQName(namespace, "job_queue", "depth"),
			"Report jobs in the queue by status: queued (waiting, retry backoffs included) or processing (held by a worker of any process).",
			[]string{"status"}, nil),
		oldest: prometheus.NewDesc(prometheus.BuildFQName(namespace, "job_queue", "oldest_age_seconds"),
			"Time since the queued job that has waited longest became runnable (created, or queued again); 0 when none waits.",
			nil, nil),
		deliveries: prometheus.NewDesc(prometheus.BuildFQName(namespace, "webhook", "deliveries_pending"),
			"Webhook deliveries pending: due now, or later on the retry schedule.",
			nil, nil),
	}
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.depth
	ch <- c.oldest
	ch <- c.deliveries
}

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	// The registry's Collect has no context; the timeout is this scrape's.
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	d, err := c.src.QueueDepth(ctx)
	if err != nil {
		c.log.Warn("metrics: reading the queue depth failed; the queue gauges are left out of this scrape", "err", err)
		ch <- prometheus.NewInvalidMetric(c.depth, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, float64(d.JobsQueued), "queued")
	ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, float64(d.JobsProcessing), "processing")
	age := 0.0
	if !d.OldestRunnable.IsZero() {
		age = max(c.now().Sub(d.OldestRunnable).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, age)
	ch <- prometheus.MustNewConstMetric(c.deliveries, prometheus.GaugeValue, float64(d.DeliveriesQueued))
}
