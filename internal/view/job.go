package view

import (
	"github.com/locrisk/locrisk"
)

// PollAfterActive is the suggested poll interval, in seconds, while a job
// is queued or processing; a report takes milliseconds to generate once a
// worker is free.
const PollAfterActive = 1

// Job is a report job as the API shows it (docs/api.md, Report jobs), and as a
// webhook event's data.job carries it.
type Job struct {
	JobID            string     `json:"jobId"`
	Status           string     `json:"status"`
	StatusURL        string     `json:"statusUrl"`
	Result           *JobResult `json:"result,omitempty"`
	PollAfterSeconds int        `json:"pollAfterSeconds"`
	Latitude         float64    `json:"latitude"`
	Longitude        float64    `json:"longitude"`
	BatchID          *string    `json:"batchId"`
	WatchItemID      *string    `json:"watchItemId,omitempty"`
	Attempts         int        `json:"attempts"`
	CreatedUTC       string     `json:"createdUtc"`
	UpdatedUTC       string     `json:"updatedUtc"`
	CompletedUTC     *string    `json:"completedUtc,omitempty"`
	Error            *JobError  `json:"error,omitempty"`
}

// JobResult points at a completed job's report.
type JobResult struct {
	ReportID  string `json:"reportId"`
	ReportURL string `json:"reportUrl"`
	PDFURL    string `json:"pdfUrl"`
}

// JobError is why a job failed.
type JobError struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Transient bool   `json:"transient"`
}

// NewJob renders j. Fields that belong to one state only (result,
// completedUtc, error) are left out in the others rather than sent as null.
func NewJob(j locrisk.Job) Job {
	v := Job{
		JobID:            j.ID,
		Status:           j.Status,
		StatusURL:        JobPath(j.ID),
		PollAfterSeconds: PollAfterActive,
		Latitude:         j.Latitude,
		Longitude:        j.Longitude,
		BatchID:          j.BatchID,
		WatchItemID:      j.WatchItemID,
		Attempts:         j.Attempts,
		CreatedUTC:       Time(j.CreatedUTC),
		UpdatedUTC:       Time(j.UpdatedUTC),
	}
	if j.Terminal() {
		v.PollAfterSeconds = 0
		v.CompletedUTC = TimePtr(j.CompletedUTC)
	}
	if j.Status == locrisk.StatusCompleted && j.ReportID != nil {
		v.Result = &JobResult{ReportID: *j.ReportID, ReportURL: ReportPath(*j.ReportID), PDFURL: ReportPDFPath(*j.ReportID)}
	}
	if j.Status == locrisk.StatusFailed {
		e := &JobError{}
		if j.ErrorCode != nil {
			e.Code = *j.ErrorCode
		}
		if j.ErrorMessage != nil {
			e.Message = *j.ErrorMessage
		}
		if j.ErrorTransient != nil {
			e.Transient = *j.ErrorTransient
		}
		v.Error = e
	}
	return v
}

// JobList is the response of GET /location-risk/report-jobs.
type JobList struct {
	Jobs       []Job   `json:"jobs"`
	Limit      int     `json:"limit"`
	NextCursor *string `json:"nextCursor"`
}

// NewJobList renders one page of jobs; next is the cursor of the following
// page, "" on the last one.
func NewJobList(jobs []locrisk.Job, limit int, next string) JobList {
	out := JobList{Jobs: make([]Job, 0, len(jobs)), Limit: limit}
	for _, j := range jobs {
		out.Jobs = append(out.Jobs, NewJob(j))
	}
	if next != "" {
		out.NextCursor = &next
	}
	return out
}
