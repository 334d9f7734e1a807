package locrisk

// The argument checks every store makes before it touches its database,
// one function each, so that a bad value is refused with the same
// ErrInvalid text whichever store is behind the service (the suite in
// internal/storetest compares them). The checks of API keys are
// NewKey.Normalized's (keys.go), and those of a usage history
// NewUsageWindow's (usagewindow.go).

import (
	"crypto/ed25519"
	"fmt"
	"strings"
	"time"
)

// CheckNewAccount checks the fields of an account to create and returns
// its name with the surrounding space removed: the name must not be blank,
// the quota not negative (0 is an account that cannot create jobs) and the
// rate limit positive.
func CheckNewAccount(name string, monthlyQuota, rateLimit int) (string, error) {
	u, err := AccountUpdate{Name: &name, MonthlyQuota: &monthlyQuota, RateLimit: &rateLimit}.Normalized()
	if err != nil {
		return "", err
	}
	return *u.Name, nil
}

// Normalized checks the fields u changes, with CheckNewAccount's rules, and
// returns u with its name trimmed.
func (u AccountUpdate) Normalized() (AccountUpdate, error) {
	if u.Name != nil {
		name := strings.TrimSpace(*u.Name)
		if name == "" {
			return AccountUpdate{}, fmt.Errorf("%w: account name is empty", ErrInvalid)
		}
		u.Name = &name
	}
	if u.MonthlyQuota != nil && *u.MonthlyQuota < 0 {
		return AccountUpdate{}, fmt.Errorf("%w: monthly quota %d is negative", ErrInvalid, *u.MonthlyQuota)
	}
	if u.RateLimit != nil && *u.RateLimit <= 0 {
		return AccountUpdate{}, fmt.Errorf("%w: rate limit %d must be positive", ErrInvalid, *u.RateLimit)
	}
	return u, nil
}

// Normalized checks j and returns it with its bucket set (BucketAPI when
// "").
func (j NewJob) Normalized() (NewJob, error) {
	if j.Bucket == "" {
		j.Bucket = BucketAPI
	}
	if !ValidBucket(j.Bucket) {
		return NewJob{}, fmt.Errorf("%w: unknown bucket %q", ErrInvalid, j.Bucket)
	}
	if err := checkIdempotency(j.IdempotencyKey, j.RequestHash); err != nil {
		return NewJob{}, err
	}
	return j, nil
}

// checkIdempotency refuses a key without the hash of its request: a replay
// could not be told from another request under the same key.
func checkIdempotency(key, hash string) error {
	if key != "" && hash == "" {
		return fmt.Errorf("%w: an idempotency key needs a request hash", ErrInvalid)
	}
	return nil
}

// Validate checks nb and returns how many of its items are valid (those
// that become jobs): a batch needs at least one item, and a valid item (no
// ErrorCode) needs both coordinates.
func (nb NewBatch) Validate() (valid int, err error) {
	if len(nb.Items) == 0 {
		return 0, fmt.Errorf("%w: a batch needs at least one item", ErrInvalid)
	}
	if err := checkIdempotency(nb.IdempotencyKey, nb.RequestHash); err != nil {
		return 0, err
	}
	for i, it := range nb.Items {
		switch {
		case it.ErrorCode != "":
		case it.Latitude == nil || it.Longitude == nil:
			return 0, fmt.Errorf("%w: item %d is valid but lacks a coordinate", ErrInvalid, i+1)
		default:
			valid++
		}
	}
	return valid, nil
}

// Validate checks what a store needs of an endpoint to create: an account,
// a name, a URL and at least one event, each a name without white space
// (the events are stored separated by spaces). The API has checked the rest
// (the URL's form, the event names it knows).
func (ne NewWebhookEndpoint) Validate() error {
	if ne.AccountID == "" || ne.Name == "" || ne.URL == "" || len(ne.Events) == 0 {
		return fmt.Errorf("%w: endpoint needs an account, name, url and events", ErrInvalid)
	}
	for _, ev := range ne.Events {
		if ev == "" || strings.ContainsAny(ev, " \t\r\n") {
			return fmt.Errorf("%w: event name %q", ErrInvalid, ev)
		}
	}
	return nil
}

// Validate checks an event to put in the outbox: an id that validID
// accepts (an event id), a type and a body.
func (ev WebhookEvent) Validate(validID func(id string) bool) error {
	if !validID(ev.ID) || ev.Type == "" || len(ev.Body) == 0 {
		return fmt.Errorf("%w: incomplete webhook event %q", ErrInvalid, ev.ID)
	}
	return nil
}

// ValidateNew checks a key to store as the current one: it needs an id, a
// creation time and its private half.
func (k SigningKey) ValidateNew() error {
	if len(k.PrivateKey) != ed25519.PrivateKeySize || k.ID == "" || k.CreatedUTC.IsZero() {
		return fmt.Errorf("%w: a signing key needs an id, a creation time and its private key", ErrInvalid)
	}
	return nil
}

// CheckJobClaim checks the arguments of a job claim: an owner, whose lease
// the claim records, and a positive lease.
func CheckJobClaim(owner string, lease time.Duration) error {
	if owner == "" || lease <= 0 {
		return fmt.Errorf("%w: claim needs an owner and a positive lease", ErrInvalid)
	}
	return nil
}

// Validate checks that both limits are positive: a zero limit would let
// no delivery be claimed, ever.
func (l DeliveryLimits) Validate() error {
	if l.PerEndpoint <= 0 || l.PerAccount <= 0 {
		return fmt.Errorf("%w: a claim needs positive per-endpoint and per-account limits", ErrInvalid)
	}
	return nil
}

// CheckDeliveryClaim checks the arguments of a delivery claim: a positive
// lease and limits.
func CheckDeliveryClaim(lease time.Duration, limits DeliveryLimits) error {
	if lease <= 0 {
		return fmt.Errorf("%w: a claim needs a positive lease", ErrInvalid)
	}
	return limits.Validate()
}

// CheckStatusFilter checks the status a job list is filtered by: "" (all)
// or a job status.
func CheckStatusFilter(status string) error {
	if status != "" && !ValidStatus(status) {
		return fmt.Errorf("%w: unknown status %q", ErrInvalid, status)
	}
	return nil
}

// Normalized checks p and returns it with its batch size set
// (DefaultPurgeBatch when not positive). It needs Now: without it the
// idempotency keys' window has no place.
func (p PurgePolicy) Normalized() (PurgePolicy, error) {
	if p.Now.IsZero() {
		return PurgePolicy{}, fmt.Errorf("%w: purge needs the current time", ErrInvalid)
	}
	if p.Batch <= 0 {
		p.Batch = DefaultPurgeBatch
	}
	return p, nil
}
