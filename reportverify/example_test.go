package reportverify_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"

	"github.com/locrisk/locrisk/reportverify"
)

// An auditor checks a saved report with the keys the service publishes.
func ExampleVerify() {
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	report := []byte(`{"reportId":"01a220fe-c8f1-70b0-bf93-5594394bf4c6","summary":{"overallScore":72}}`)
	signed, _ := reportverify.Sign(report, "lrs-20261128-1a2b3c4d", priv) // what the service serves

	published := `{"keys":[{"keyId":"lrs-20261128-1a2b3c4d","algorithm":"Ed25519","publicKey":"` +
		base64.StdEncoding.EncodeToString(priv.Public().(ed25519.PublicKey)) +
		`","createdUtc":"2026-11-28T07:00:00Z","retiredUtc":null}]}`
	keys, _ := reportverify.ParseKeySet([]byte(published))

	res, err := reportverify.Verify(signed, keys)
	fmt.Println(res.KeyID, err)
	forged := bytes.Replace(signed, []byte(`72`), []byte(`12`), 1)
	_, err = reportverify.Verify(forged, keys)
	fmt.Println(err)
	// Output:
	// lrs-20261128-1a2b3c4d <nil>
	// reportverify: the signature does not match the document (key lrs-20261128-1a2b3c4d)
}
