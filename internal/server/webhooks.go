package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/ids"
	"github.com/locrisk/locrisk/internal/view"
	"github.com/locrisk/locrisk/internal/webhook"
)

// Webhook endpoints and their deliveries (docs/api.md, Webhooks). Events
// are written by the outbox hook (package outbox) and sent by package
// delivery; these handlers manage endpoints and show the log, in the shapes
// of package view.

// WebhookConfig is the server's part of the webhook settings.
type WebhookConfig struct {
	// AllowPrivate accepts http URLs and hosts on loopback, private and
	// other non-public addresses (--webhook-allow-private; for tests and
	// closed networks). The delivery worker must be given the same value.
	AllowPrivate bool
	// Resolver looks endpoint hosts up at creation; nil means the system
	// resolver. Tests substitute a fake.
	Resolver webhook.Resolver
	// Wake (may be nil) rouses the delivery worker after a test event or a
	// redelivery is queued, so it goes out at once.
	Wake func()
}

// Limits of endpoint creation and of the delivery list.
const (
	maxEndpointNameLen       = 100 // characters (Unicode code points)
	defaultDeliveryPageSize  = 50
	maxDeliveryPageSize      = 100
	endpointURLLookupTimeout = 5 * time.Second
)

// listWebhooks is GET /webhooks (docs/api.md, Webhooks): the account's
// endpoints, disabled ones included (docs/api.md, List endpoints), newest
// first, paged like the job list: an account may have disabled any number.
func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request, p *principal) error {
	_, limit, cursor, err := pagedQuery(r)
	if err != nil {
		return err
	}
	eps, next, err := s.store.ListWebhookEndpoints(r.Context(), p.account.ID, limit, cursor)
	if err != nil {
		return storeError(err, codeWebhookEndpointMissing, s.now())
	}
	writeJSON(w, http.StatusOK, view.NewWebhookEndpointList(eps, limit, next))
	return nil
}

// webhookFields are the members of an endpoint's body.
var webhookFields = []string{"name", "url", "events"}

// createWebhook is POST /webhooks (docs/api.md, Webhooks). Checks run in
// this order: body (415, 413, 400 invalid_request), name, url (syntax, then the
// addresses the host resolves to), events, then the active-endpoint limit.
// 201 with the endpoint and its signing secret; no Location header, since
// no operation reads a single endpoint.
func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request, p *principal) error {
	obj, err := readObject(w, r)
	if err != nil {
		return err
	}
	var body struct{ name, url, events json.RawMessage }
	pickFields(obj, field{"name", &body.name}, field{"url", &body.url}, field{"events", &body.events})
	bodyParsed(r) // before the URL's host is resolved
	name, err := endpointName(body.name)
	if err != nil {
		return missingFieldError(err, body.name, obj, webhookFields...)
	}
	rawURL, err := s.endpointURL(r.Context(), body.url)
	if err != nil {
		return missingFieldError(err, body.url, obj, webhookFields...)
	}
	events, err := endpointEvents(body.events)
	if err != nil {
		return missingFieldError(err, body.events, obj, webhookFields...)
	}
	ep, secret, err := s.store.CreateWebhookEndpoint(r.Context(), locrisk.NewWebhookEndpoint{
		AccountID: p.account.ID, Name: name, URL: rawURL, Events: events,
	}, s.now())
	if err != nil {
		return storeError(err, codeWebhookEndpointMissing, s.now())
	}
	writeJSON(w, http.StatusCreated, view.CreatedWebhookEndpoint{Endpoint: view.NewWebhookEndpoint(ep), SigningSecret: secret})
	return nil
}

// endpointName: required free text of at most 100 characters without
// control characters (endpointNameRule).
// Kept as given.
func endpointName(raw json.RawMessage) (string, error) {
	name, ok := freeText(raw, endpointNameRule)
	if !ok {
		return "", errorf(codeInvalidName, "name is required: a string of 1 to %d characters, not blank, without control characters", maxEndpointNameLen)
	}
	return name, nil
}

// endpointURL: a JSON string that webhook.CheckURL accepts (absolute https
// URL of at most 2048 characters, no credentials, no fragment, a host whose
// every address is public unless private destinations are allowed).
func (s *Server) endpointURL(ctx context.Context, raw json.RawMessage) (string, error) {
	var u string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &u) != nil {
		return "", errorf(codeInvalidURL, "url is required: an absolute https URL of at most %d characters", webhook.MaxURLLength)
	}
	ctx, cancel := context.WithTimeout(ctx, endpointURLLookupTimeout)
	defer cancel()
	err := webhook.CheckURL(ctx, u, s.webhooks.AllowPrivate, s.webhooks.Resolver)
	var ue *webhook.URLError
	switch {
	case err == nil:
		return u, nil
	case errors.As(err, &ue):
		// The reason names neither a resolved address nor its class: every
		// non-public host has the one reason webhook.ReasonNotPublic.
		return "", errorf(codeInvalidURL, "%s", ue.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return "", errorf(codeInvalidURL, "url host could not be resolved in time")
	}
	return "", fmt.Errorf("check webhook url: %w", err)
}

// endpointEvents: a non-empty JSON array of known event names. A name given
// twice is kept once, in the position of its first occurrence.
func endpointEvents(raw json.RawMessage) ([]string, error) {
	bad := errorf(codeInvalidEvents, "events is required: a non-empty array of event names from %s",
		strings.Join(webhook.EventTypes(), ", "))
	if len(raw) == 0 || raw[0] != '[' {
		return nil, bad
	}
	var out []string
	for it := range elements(raw) {
		var name string
		if len(it) == 0 || it[0] != '"' || json.Unmarshal(it, &name) != nil {
			return nil, bad
		}
		if !webhook.KnownEvent(name) {
			return nil, errorf(codeInvalidEvents, "unknown event %q: events must be among %s", name, strings.Join(webhook.EventTypes(), ", "))
		}
		if !containsString(out, name) {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, bad
	}
	return out, nil
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// endpointNotFound is the answer for an endpoint that is unknown, malformed
// or another account's.
func endpointNotFound() error {
	return &Error{Code: codeWebhookEndpointMissing, Message: notFoundMessage(codeWebhookEndpointMissing)}
}

// deleteWebhook is DELETE /webhooks/{endpointId} (docs/api.md, Webhooks):
// the endpoint becomes inactive (it stays in the list with isActive false)
// and its pending deliveries stop. 204 with no body, also for an endpoint
// that is already disabled, so a repeated DELETE is harmless.
func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request, p *principal) error {
	id, err := pathID(r, "endpointId", ids.WebhookEndpoint, codeWebhookEndpointMissing)
	if err != nil {
		return err
	}
	if err := s.store.DisableWebhookEndpoint(r.Context(), p.account.ID, id, s.now()); err != nil {
		return storeError(err, codeWebhookEndpointMissing, s.now())
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// listDeliveries is GET /webhooks/deliveries (docs/api.md, Webhooks): the
// account's most recent deliveries, newest first; limit default 50,
// 1..100; optional endpointId (an endpoint of the account, active or not).
func (s *Server) listDeliveries(w http.ResponseWriter, r *http.Request, p *principal) error {
	q, err := parseQuery(r)
	if err != nil {
		return err
	}
	limit := defaultDeliveryPageSize
	if vs, ok := q["limit"]; ok {
		n, ok := parseBoundedInt(vs[0], 1, maxDeliveryPageSize)
		if !ok {
			return errorf(codeInvalidLimit, "limit must be an integer from 1 to %d", maxDeliveryPageSize)
		}
		limit = n
	}
	endpointID := ""
	if vs, ok := q["endpointId"]; ok {
		endpointID = vs[0]
		if !ids.HasPrefix(endpointID, ids.WebhookEndpoint) {
			return endpointNotFound()
		}
		if _, err := s.store.GetWebhookEndpoint(r.Context(), p.account.ID, endpointID); err != nil {
			return storeError(err, codeWebhookEndpointMissing, s.now())
		}
	}
	ds, err := s.store.ListWebhookDeliveries(r.Context(), p.account.ID, endpointID, limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, view.NewWebhookDeliveryList(ds))
	return nil
}

// wakeDeliveries rouses the delivery worker, if there is one.
func (s *Server) wakeDeliveries() {
	if s.webhooks.Wake != nil {
		s.webhooks.Wake()
	}
}

// testWebhook is POST /webhooks/{endpointId}/test (docs/api.md, Webhooks):
// a signed webhook.test event for that endpoint, whatever events it
// subscribes to, queued for delivery now; 202 with the delivery and
// Location: the endpoint's delivery log. The body may be empty (whatever
// its Content-Type) or a JSON object (members ignored). Unknown or
// foreign endpoint 404, disabled 409.
func (s *Server) testWebhook(w http.ResponseWriter, r *http.Request, p *principal) error {
	id, err := pathID(r, "endpointId", ids.WebhookEndpoint, codeWebhookEndpointMissing)
	if err != nil {
		return err
	}
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	// An empty body needs no Content-Type; one that is there must be
	// declared as JSON, as on every operation that reads a body.
	if len(bytes.Trim(body, " \t\r\n")) > 0 {
		if err := checkJSONContentType(r); err != nil {
			return err
		}
		if _, err := readObjectFrom(body); err != nil {
			return err
		}
	}
	bodyParsed(r)
	now := s.now()
	ev := webhook.NewTestEvent(ids.New(ids.Event), id, now)
	raw, err := webhook.MarshalEvent(ev)
	if err != nil {
		return err
	}
	d, err := s.store.QueueTestWebhook(r.Context(), p.account.ID, id,
		locrisk.WebhookEvent{ID: ev.ID, Type: ev.Type, Body: raw, CreatedUTC: now})
	if err != nil {
		return storeError(err, codeWebhookEndpointMissing, now)
	}
	s.wakeDeliveries()
	w.Header().Set("Location", view.WebhookDeliveriesPath+"?endpointId="+url.QueryEscape(id))
	writeJSON(w, http.StatusAccepted, view.NewWebhookDelivery(d))
	return nil
}

// redeliverWebhook is POST /webhooks/deliveries/{deliveryId}/redeliver
// (docs/api.md, Webhooks): a failed delivery is pending again, same id,
// due now, with a fresh retry schedule; 202 with the delivery. Unknown or
// foreign 404; not failed, or its endpoint disabled, 409. The body is not
// read, as for a job retry.
func (s *Server) redeliverWebhook(w http.ResponseWriter, r *http.Request, p *principal) error {
	id, err := pathID(r, "deliveryId", ids.Delivery, codeWebhookDeliveryMissing)
	if err != nil {
		return err
	}
	now := s.now()
	d, err := s.store.RedeliverWebhook(r.Context(), p.account.ID, id, now)
	if err != nil {
		return storeError(err, codeWebhookDeliveryMissing, now)
	}
	s.wakeDeliveries()
	w.Header().Set("Location", view.WebhookDeliveriesPath+"?endpointId="+url.QueryEscape(d.EndpointID))
	writeJSON(w, http.StatusAccepted, view.NewWebhookDelivery(d))
	return nil
}
