package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"locrisk/ids"
)

// Event types (docs/api.md, Webhooks). No others exist.
const (
	EventJobCompleted = "report.job.completed"
	EventJobFailed    = "report.job.failed"
)

// APIVersion is the apiVersion of event bodies, as of the API responses.
const APIVersion = "v1"

// EventTypes returns the known event types in a stable order, for
// validation messages.
func EventTypes() []string { return []string{EventJobCompleted, EventJobFailed} }

// KnownEvent reports whether name is an event type an endpoint may subscribe to.
func KnownEvent(name string) bool {
	return name == EventJobCompleted || name == EventJobFailed
}

// Event is the body of a delivery (docs/api.md, Webhooks):
// {id, type, apiVersion, createdUtc, data: {job}}.
type Event struct {
	ID         string    `json:"id"`
	Type       string    `json:"type"`
	APIVersion string    `json:"apiVersion"`
	CreatedUTC string    `json:"createdUtc"`
	Data       EventData `json:"data"`
}

// EventData carries the report job exactly as GET shows it at that moment;
// it is raw JSON (built by package view) so this package does not depend
// on the API's types.
type EventData struct {
	Job json.RawMessage `json:"job"`
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

// MarshalEvent returns the exact bytes to store in the outbox and send. It
// refuses an event without an evt_ id, of an unknown type, without a
// createdUtc, or whose job is not a JSON object, so a bad event is caught
// when recorded rather than at the receiver.
func MarshalEvent(e Event) ([]byte, error) {
	switch {
	case !strings.HasPrefix(e.ID, ids.Event):
		return nil, fmt.Errorf("webhook: event id %q lacks the %s prefix", e.ID, ids.Event)
	case !KnownEvent(e.Type):
		return nil, fmt.Errorf("webhook: unknown event type %q", e.Type)
	case e.APIVersion == "":
		return nil, errors.New("webhook: event apiVersion is empty")
	case e.CreatedUTC == "":
		return nil, errors.New("webhook: event createdUtc is empty")
	}
	var job map[string]json.RawMessage
	if err := json.Unmarshal(e.Data.Job, &job); err != nil || job == nil {
		return nil, fmt.Errorf("webhook: event %s: data.job is not a JSON object", e.ID)
	}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("webhook: marshal event %s: %w", e.ID, err)
	}
	return b, nil
}
