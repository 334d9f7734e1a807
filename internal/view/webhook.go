package view

import (
	"github.com/locrisk/locrisk"
)

// WebhookEndpoint is an endpoint as the API shows it: never the secret.
type WebhookEndpoint struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	URL         string   `json:"url"`
	Events      []string `json:"events"`
	IsActive    bool     `json:"isActive"`
	CreatedUTC  string   `json:"createdUtc"`
	DisabledUTC *string  `json:"disabledUtc"`
}

// NewWebhookEndpoint renders e.
func NewWebhookEndpoint(e locrisk.WebhookEndpoint) WebhookEndpoint {
	events := e.Events
	if events == nil {
		events = []string{}
	}
	return WebhookEndpoint{ID: e.ID, Name: e.Name, URL: e.URL, Events: events, IsActive: e.Active,
		CreatedUTC: Time(e.CreatedUTC), DisabledUTC: TimePtr(e.DisabledUTC)}
}

// CreatedWebhookEndpoint is the response of POST /webhooks, the one time the
// signing secret is shown.
type CreatedWebhookEndpoint struct {
	Endpoint      WebhookEndpoint `json:"endpoint"`
	SigningSecret string          `json:"signingSecret"`
}

// WebhookEndpointList is the response of GET /webhooks: one page, shaped
// like JobList.
type WebhookEndpointList struct {
	Endpoints  []WebhookEndpoint `json:"endpoints"`
	Limit      int               `json:"limit"`
	NextCursor *string           `json:"nextCursor"`
}

// NewWebhookEndpointList renders one page of endpoints in their order; next
// is the cursor of the following page, "" on the last one (null).
func NewWebhookEndpointList(eps []locrisk.WebhookEndpoint, limit int, next string) WebhookEndpointList {
	out := WebhookEndpointList{Endpoints: make([]WebhookEndpoint, 0, len(eps)), Limit: limit}
	for _, e := range eps {
		out.Endpoints = append(out.Endpoints, NewWebhookEndpoint(e))
	}
	if next != "" {
		out.NextCursor = &next
	}
	return out
}

// WebhookDelivery is one delivery (one event to one endpoint) in the
// delivery log. Fields that do not apply yet, or any more, are null.
type WebhookDelivery struct {
	ID             string  `json:"id"`
	EndpointID     string  `json:"endpointId"`
	EventID        string  `json:"eventId"`
	Event          string  `json:"event"`
	JobID          *string `json:"jobId"` // null for batch.completed and webhook.test
	Status         string  `json:"status"`
	Attempts       int     `json:"attempts"`
	ResponseStatus *int    `json:"responseStatus"`
	Error          *string `json:"error"`
	CreatedUTC     string  `json:"createdUtc"`
	LastAttemptUTC *string `json:"lastAttemptUtc"`
	NextAttemptUTC *string `json:"nextAttemptUtc"`
	DeliveredUTC   *string `json:"deliveredUtc"`
}

// NewWebhookDelivery renders d.
func NewWebhookDelivery(d locrisk.WebhookDelivery) WebhookDelivery {
	return WebhookDelivery{
		ID: d.ID, EndpointID: d.EndpointID, EventID: d.EventID, Event: d.Event, JobID: d.JobID,
		Status: d.Status, Attempts: d.Attempts, ResponseStatus: d.ResponseStatus, Error: d.Error,
		CreatedUTC: Time(d.CreatedUTC), LastAttemptUTC: TimePtr(d.LastAttemptUTC),
		NextAttemptUTC: TimePtr(d.NextAttemptUTC), DeliveredUTC: TimePtr(d.DeliveredUTC),
	}
}

// WebhookDeliveryList is the response of GET /webhooks/deliveries.
type WebhookDeliveryList struct {
	Deliveries []WebhookDelivery `json:"deliveries"`
}

// NewWebhookDeliveryList renders ds in their order.
func NewWebhookDeliveryList(ds []locrisk.WebhookDelivery) WebhookDeliveryList {
	out := WebhookDeliveryList{Deliveries: make([]WebhookDelivery, 0, len(ds))}
	for _, d := range ds {
		out.Deliveries = append(out.Deliveries, NewWebhookDelivery(d))
	}
	return out
}
