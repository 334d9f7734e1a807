package webhook

import (
	"testing"

	"github.com/locrisk/locrisk/internal/ids"
)

// TestServiceSecretsSignStandard: every endpoint secret and event id the
// service makes can be signed by the Standard Webhooks scheme, so Send
// never fails for want of it (internal/ids shows why for every secret).
func TestServiceSecretsSignStandard(t *testing.T) {
	for i := 0; i < 200; i++ {
		secret, id := ids.NewSecret(ids.SigningSecret), ids.New(ids.Event)
		if _, err := SignStandard(secret, id, 1700000000, []byte(`{}`)); err != nil {
			t.Fatalf("SignStandard(%q, %q): %v", secret, id, err)
		}
	}
}
