package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/locrisk/locrisk/internal/ids"
)

// Event types (docs/api.md, Webhooks). No others exist. An endpoint may
// subscribe to all but webhook.test, which is sent only when asked for
// (POST /webhooks/{endpointId}/test) and cannot be subscribed to.
const (
	EventJobCompleted   = "report.job.completed"
	EventJobFailed      = "report.job.failed"
	EventBatchCompleted = "batch.completed"
	EventReportChanged  = "report.changed"
	EventTest           = "webhook.test"
)

// APIVersion is the apiVersion of event bodies, as of the API responses.
const APIVersion = "v1"

// EventTypes returns the event types an endpoint may subscribe to, in a
// stable order, for validation messages.
func EventTypes() []string {
	return []string{EventJobCompleted, EventJobFailed, EventBatchCompleted, EventReportChanged}
}

// KnownEvent reports whether name is an event type an endpoint may subscribe to.
func KnownEvent(name string) bool {
	return name == EventJobCompleted || name == EventJobFailed || name == EventBatchCompleted || name == EventReportChanged
}

// Event is the body of a delivery (docs/api.md, Webhooks):
// {id, type, apiVersion, createdUtc, data}, where data is {job} for the
// report.job events, {batch} for batch.completed, {endpointId} for
// webhook.test and the change itself for report.changed.
type Event struct {
	ID         string    `json:"id"`
	Type       string    `json:"type"`
	APIVersion string    `json:"apiVersion"`
	CreatedUTC string    `json:"createdUtc"`
	Data       EventData `json:"data"`
}

// EventData carries the report job, or the batch, exactly as GET shows it
// at that moment, as raw JSON (built by package view) so this package does
// not depend on the API's types; or, for a test event, the endpoint's id.
// Exactly one member is set, as the event's type says.
type EventData struct {
	Job        json.RawMessage `json:"job,omitempty"`
	Batch      json.RawMessage `json:"batch,omitempty"`
	EndpointID string          `json:"endpointId,omitempty"`
	// Change is the whole data of a report.changed event, a JSON object
	// built by package view (docs/webhooks.md, report.changed).
	Change json.RawMessage `json:"-"`
}

// MarshalJSON writes a report.changed event's change as the data
// itself, and any other data as its one member.
func (d EventData) MarshalJSON() ([]byte, error) {
	if d.Change != nil {
		return d.Change, nil
	}
	type members EventData // without this method
	return json.Marshal(members(d))
}

// NewEvent fills an Event with APIVersion and createdUtc as whole-second
// RFC 3339 UTC.
func NewEvent(id, typ string, created time.Time, job json.RawMessage) Event {
	return Event{
		ID:         id,
		Type:       typ,
		APIVersion: APIVersion,
		CreatedUTC: created.UTC().Truncate(time.Second).Format(time.RFC3339),
		Data:       EventData{Job: job},
	}
}

// NewBatchEvent is a batch.completed event carrying batch (the batch as GET
// shows it, raw JSON), created at created.
func NewBatchEvent(id string, created time.Time, batch json.RawMessage) Event {
	e := NewEvent(id, EventBatchCompleted, created, nil)
	e.Data = EventData{Batch: batch}
	return e
}

// NewChangeEvent is a report.changed event carrying change (raw JSON, a
// JSON object), created at created.
func NewChangeEvent(id string, created time.Time, change json.RawMessage) Event {
	e := NewEvent(id, EventReportChanged, created, nil)
	e.Data = EventData{Change: change}
	return e
}

// NewTestEvent is a webhook.test event for the endpoint, created at created.
func NewTestEvent(id, endpointID string, created time.Time) Event {
	e := NewEvent(id, EventTest, created, nil)
	e.Data = EventData{EndpointID: endpointID}
	return e
}

// MarshalEvent returns the exact bytes to store in the outbox and send. It
// refuses an event without an evt_ id, of an unknown type, without a
// createdUtc, or whose data does not match its type (a job or a batch that
// is not a JSON object, a test event without an endpoint id, a member of
// another type), so a bad event is caught when recorded rather than at the
// receiver.
func MarshalEvent(e Event) ([]byte, error) {
	switch {
	case !strings.HasPrefix(e.ID, ids.Event):
		return nil, fmt.Errorf("webhook: event id %q lacks the %s prefix", e.ID, ids.Event)
	case !KnownEvent(e.Type) && e.Type != EventTest:
		return nil, fmt.Errorf("webhook: unknown event type %q", e.Type)
	case e.APIVersion == "":
		return nil, errors.New("webhook: event apiVersion is empty")
	case e.CreatedUTC == "":
		return nil, errors.New("webhook: event createdUtc is empty")
	}
	d := e.Data
	switch e.Type {
	case EventBatchCompleted:
		if !isObject(d.Batch) {
			return nil, fmt.Errorf("webhook: event %s: data.batch is not a JSON object", e.ID)
		}
		if d.Job != nil || d.EndpointID != "" || d.Change != nil {
			return nil, fmt.Errorf("webhook: event %s: a %s event carries only data.batch", e.ID, e.Type)
		}
	case EventReportChanged:
		if !isObject(d.Change) {
			return nil, fmt.Errorf("webhook: event %s: data is not a JSON object", e.ID)
		}
		if d.Job != nil || d.Batch != nil || d.EndpointID != "" {
			return nil, fmt.Errorf("webhook: event %s: a %s event carries only its change", e.ID, e.Type)
		}
	case EventTest:
		if d.EndpointID == "" {
			return nil, fmt.Errorf("webhook: event %s: data.endpointId is empty", e.ID)
		}
		if d.Job != nil || d.Batch != nil || d.Change != nil {
			return nil, fmt.Errorf("webhook: event %s: a %s event carries only data.endpointId", e.ID, e.Type)
		}
	default:
		if !isObject(d.Job) {
			return nil, fmt.Errorf("webhook: event %s: data.job is not a JSON object", e.ID)
		}
		if d.Batch != nil || d.EndpointID != "" || d.Change != nil {
			return nil, fmt.Errorf("webhook: event %s: a %s event carries only data.job", e.ID, e.Type)
		}
	}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("webhook: marshal event %s: %w", e.ID, err)
	}
	return b, nil
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}
