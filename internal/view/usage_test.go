package view

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
)

// The usage bodies byte for byte: field order, the quota fields each entry
// leaves out, null against empty, and times cut to the second (docs/api.md,
// Current usage and Usage history).
func TestNewUsageCurrent(t *testing.T) {
	nov := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		u    locrisk.PeriodUsage
		rate RateUsage
		want string
	}{
		{"zero", locrisk.PeriodUsage{}, RateUsage{},
			`{"apiVersion":"v1","generatedUtc":"2026-03-01T12:00:00Z","accountId":"acct_1","quotas":[` +
				`{"name":"report_jobs","limit":0,"used":0,"remaining":0,"periodStartUtc":"0001-01-01T00:00:00Z","resetsAtUtc":"0001-01-01T00:00:00Z"},` +
				`{"name":"requests_per_minute","limit":0,"used":0,"remaining":0,"windowSeconds":0,"resetsAtUtc":"0001-01-01T00:00:00Z"}],` +
				`"apiReportJobs":{"created":0,"queued":0,"processing":0,"completed":0,"failed":0,"periodStartUtc":"0001-01-01T00:00:00Z"}}`},
		{"over quota", // remaining never goes below zero
			locrisk.PeriodUsage{Limit: 50, Start: nov, End: nov.AddDate(0, 1, 0), Created: 52, Charged: 52, Queued: 2, Processing: 1, Completed: 40, Failed: 9},
			RateUsage{Limit: 10, Used: 3, Remaining: 7, Window: time.Minute, ResetsAt: t0.Add(59 * time.Second)},
			`{"apiVersion":"v1","generatedUtc":"2026-03-01T12:00:00Z","accountId":"acct_1","quotas":[` +
				`{"name":"report_jobs","limit":50,"used":52,"remaining":0,"periodStartUtc":"2026-11-01T00:00:00Z","resetsAtUtc":"2026-12-01T00:00:00Z"},` +
				`{"name":"requests_per_minute","limit":10,"used":3,"remaining":7,"windowSeconds":60,"resetsAtUtc":"2026-03-01T12:00:59Z"}],` +
				`"apiReportJobs":{"created":52,"queued":2,"processing":1,"completed":40,"failed":9,"periodStartUtc":"2026-11-01T00:00:00Z"}}`},
		{"re-scores", // jobs created beyond those charged: the quota counts the charged ones
			locrisk.PeriodUsage{Limit: 50, Start: nov, End: nov.AddDate(0, 1, 0), Created: 30, Charged: 10, Completed: 30},
			RateUsage{Limit: 10, Used: 3, Remaining: 7, Window: time.Minute, ResetsAt: t0.Add(59 * time.Second)},
			`{"apiVersion":"v1","generatedUtc":"2026-03-01T12:00:00Z","accountId":"acct_1","quotas":[` +
				`{"name":"report_jobs","limit":50,"used":10,"remaining":40,"periodStartUtc":"2026-11-01T00:00:00Z","resetsAtUtc":"2026-12-01T00:00:00Z"},` +
				`{"name":"requests_per_minute","limit":10,"used":3,"remaining":7,"windowSeconds":60,"resetsAtUtc":"2026-03-01T12:00:59Z"}],` +
				`"apiReportJobs":{"created":30,"queued":0,"processing":0,"completed":30,"failed":0,"periodStartUtc":"2026-11-01T00:00:00Z"}}`},
	}
	for _, tc := range tests {
		b, err := json.Marshal(NewUsageCurrent("acct_1", t0, tc.u, tc.rate))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("%s:\n%s\nwant\n%s", tc.name, b, tc.want)
		}
	}
}

func TestNewUsageHistory(t *testing.T) {
	day := time.Date(2026, 2, 28, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		days   int
		bucket string
		hist   []locrisk.DailyUsage
		want   string
	}{
		{"empty", 0, "", nil, // items is [] not null; with no day, fromUtc has nothing to come from
			`{"apiVersion":"v1","accountId":"acct_1","fromUtc":"","toUtc":"2026-03-01T12:00:00Z","days":0,"bucket":null,"items":[]}`},
		{"one bucket", 2, locrisk.BucketBulk, []locrisk.DailyUsage{
			{Day: day, Bucket: locrisk.BucketBulk, ReportJobs: 5, Completed: 4, Failed: 1},
			{Day: day.AddDate(0, 0, 1), Bucket: locrisk.BucketBulk}},
			`{"apiVersion":"v1","accountId":"acct_1","fromUtc":"2026-02-28T00:00:00Z","toUtc":"2026-03-01T12:00:00Z","days":2,"bucket":"bulk","items":[` +
				`{"dateUtc":"2026-02-28","bucket":"bulk","reportJobs":5,"completed":4,"failed":1},` +
				`{"dateUtc":"2026-03-01","bucket":"bulk","reportJobs":0,"completed":0,"failed":0}]}`},
	}
	for _, tc := range tests {
		b, err := json.Marshal(NewUsageHistory("acct_1", t0, tc.days, tc.bucket, tc.hist))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("%s:\n%s\nwant\n%s", tc.name, b, tc.want)
		}
	}
}
