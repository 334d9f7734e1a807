package locrisk

// The forms values take in a store's rows, the same in every store so that
// a value means the same whichever store wrote it: an API key's secret is
// kept only as its hash, word lists (a key's scopes and allowlist, an
// endpoint's events) as words separated by spaces, a report's module
// scores and a latency histogram as JSON, a signing key's private half as
// the base64 of its Ed25519 seed. The stores keep the columns; these
// functions are what goes in them.

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// HashKeySecret is the stored form of an API key's secret: hex SHA-256. A
// fast hash is right here: the secret has 238 random bits, so there is
// nothing to brute force, and authentication runs on every request.
func HashKeySecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// KeyRecord is an API key as every store's api_keys table holds it, but
// for its times (each store keeps those its own way): the scopes and the
// allowlist as words.
type KeyRecord struct {
	ID           string `db:"id"`
	AccountID    string `db:"account_id"`
	Name         string `db:"name"`
	SecretHint   string `db:"secret_hint"`
	Scopes       string `db:"scopes"`
	ScopeVersion int    `db:"scope_version"`
	AllowedCIDRs string `db:"allowed_cidrs"`
}

// Record is k's KeyRecord.
func (k APIKey) Record() KeyRecord {
	parts := make([]string, len(k.AllowedCIDRs))
	for i, p := range k.AllowedCIDRs {
		parts[i] = p.String()
	}
	return KeyRecord{ID: k.ID, AccountID: k.AccountID, Name: k.Name, SecretHint: k.SecretHint,
		Scopes: strings.Join(k.Scopes, " "), ScopeVersion: k.ScopeVersion, AllowedCIDRs: strings.Join(parts, " ")}
}

// Key is the key r holds, its times left for the store to set.
func (r KeyRecord) Key() (APIKey, error) {
	cidrs, err := ParseCIDRs(r.AllowedCIDRs)
	if err != nil {
		return APIKey{}, fmt.Errorf("key %s: stored allowlist: %w", r.ID, err)
	}
	return APIKey{ID: r.ID, AccountID: r.AccountID, Name: r.Name, SecretHint: r.SecretHint, Scopes: strings.Fields(r.Scopes),
		ScopeVersion: r.ScopeVersion, AllowedCIDRs: cidrs}, nil
}

// StoredEvents is the stored form of an endpoint's events (each a word:
// NewWebhookEndpoint.Validate).
func StoredEvents(events []string) string { return strings.Join(events, " ") }

// ParseStoredEvents reads the stored form of an endpoint's events.
func ParseStoredEvents(s string) []string { return strings.Fields(s) }

// ModulesJSON is the stored form of the module scores: a JSON object from
// module to score (null where no data covers it), in the report's order.
func (s ReportScores) ModulesJSON() (string, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range s.Modules {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(m.Module)
		if err != nil {
			return "", err
		}
		b.Write(k)
		b.WriteByte(':')
		if m.Score == nil {
			b.WriteString("null")
		} else {
			fmt.Fprint(&b, *m.Score)
		}
	}
	b.WriteByte('}')
	return b.String(), nil
}

// ParseModuleScores reads the stored form of module scores; nil when there
// is none, and when it does not decode, so that a listing shows no module
// scores rather than failing.
func ParseModuleScores(stored *string) map[string]*int {
	if stored == nil {
		return nil
	}
	var m map[string]*int
	if err := json.Unmarshal([]byte(*stored), &m); err != nil {
		return nil
	}
	return m
}

// ParseLatencyHistogram reads the stored form of a latency histogram, a
// JSON array of counts.
func ParseLatencyHistogram(stored []byte) ([]int64, error) {
	var h []int64
	if err := json.Unmarshal(stored, &h); err != nil {
		return nil, fmt.Errorf("bad latency histogram %q: %w", stored, err)
	}
	return h, nil
}

// MergeLatencyHistogram adds add to the stored histogram ("" or empty for
// none yet) element by element and returns the stored form of the sum
// ("[]" when both are empty).
func MergeLatencyHistogram(stored []byte, add []int64) (string, error) {
	var sum RequestCounts
	if len(stored) > 0 {
		var err error
		if sum.Latency, err = ParseLatencyHistogram(stored); err != nil {
			return "", err
		}
	}
	sum.Add(RequestCounts{Latency: add})
	if sum.Latency == nil {
		sum.Latency = []int64{}
	}
	b, err := json.Marshal(sum.Latency)
	return string(b), err
}

// SeedText is the stored form of k's private half, before the store seals
// it: the base64 of its Ed25519 seed.
func (k SigningKey) SeedText() string { return base64.StdEncoding.EncodeToString(k.PrivateKey.Seed()) }

// StoredSigningKey starts the key a store reads back: its id and public
// half, which must be an Ed25519 public key.
func StoredSigningKey(id string, public []byte) (SigningKey, error) {
	if len(public) != ed25519.PublicKeySize {
		return SigningKey{}, fmt.Errorf("signing key %s: public key of %d bytes", id, len(public))
	}
	return SigningKey{ID: id, PublicKey: ed25519.PublicKey(public)}, nil
}

// SetSeedText sets k's private half from its stored form (SeedText), which
// must be the seed of k's public half.
func (k *SigningKey) SetSeedText(text string) error {
	seed, err := base64.StdEncoding.DecodeString(text)
	if err != nil || len(seed) != ed25519.SeedSize {
		return fmt.Errorf("signing key %s: the private key is not an Ed25519 seed", k.ID)
	}
	priv := ed25519.NewKeyFromSeed(seed)
	if !priv.Public().(ed25519.PublicKey).Equal(k.PublicKey) {
		return fmt.Errorf("signing key %s: the private key does not match the public key", k.ID)
	}
	k.PrivateKey = priv
	return nil
}

// ParseReportScores reads a report's scores from their stored columns
// (overall score, risk level, module scores as ModulesJSON wrote them),
// the modules in their stored order; nil when the overall score is
// unknown or the modules do not decode.
func ParseReportScores(overall *int, level *string, modules *string) *ReportScores {
	if overall == nil || level == nil || modules == nil {
		return nil
	}
	sc := &ReportScores{Overall: *overall, RiskLevel: *level}
	dec := json.NewDecoder(strings.NewReader(*modules))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		name, ok := t.(string)
		if !ok {
			return nil
		}
		var v *int
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		sc.Modules = append(sc.Modules, ModuleScore{Module: name, Score: v})
	}
	return sc
}
