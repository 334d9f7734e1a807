package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/locrisk/locrisk"
	"github.com/locrisk/locrisk/internal/signing"
	"github.com/locrisk/locrisk/internal/view"
	"github.com/locrisk/locrisk/reportverify"
)

// TestReportsAreSigned: the summary and full JSON and the PDF's
// attached JSON verify, offline, with only the keys the well-known path
// publishes; a document changed in any one byte of its content does not;
// the provenance names the inputs and the stored body's digest.
func TestReportsAreSigned(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(1000, 100000))
	job := e.createJob(key, 37.77, -122.42)
	id := e.complete(job.JobID)

	rec := e.do("GET", view.SigningKeysPath, "", "")
	if rec.Code != http.StatusOK {
		t.Fatalf("keys: %d %s", rec.Code, rec.Body)
	}
	keys, err := reportverify.ParseKeySet(rec.Body.Bytes())
	if err != nil {
		t.Fatalf("parse keys: %v\n%s", err, rec.Body)
	}
	published := decode[view.SigningKeys](t, rec)
	if len(published.Keys) != 1 || published.Keys[0].RetiredUTC != nil || !strings.HasPrefix(published.Keys[0].PublicKeyPEM, "-----BEGIN PUBLIC KEY-----") {
		t.Fatalf("published keys %+v", published)
	}

	for _, detail := range []string{"summary", "full"} {
		rec := e.do("GET", reportsPath+id+"?detail="+detail, key, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", detail, rec.Code, rec.Body)
		}
		doc := rec.Body.Bytes()
		res, err := reportverify.Verify(doc, keys)
		if err != nil {
			t.Fatalf("%s does not verify: %v", detail, err)
		}
		if res.KeyID != published.Keys[0].KeyID {
			t.Errorf("%s signed by %s, want %s", detail, res.KeyID, published.Keys[0].KeyID)
		}
		if !bytes.HasSuffix(bytes.TrimSpace(doc), []byte("}}")) || !bytes.Contains(doc, []byte(`,"signature":{"algorithm":"Ed25519"`)) {
			t.Errorf("%s: the signature is not the last member: ...%s", detail, doc[len(doc)-200:])
		}
		v := decode[view.Report](t, rec)
		p := v.Provenance
		if p.Inputs.Latitude != 37.77 || p.Inputs.Longitude != -122.42 || p.Inputs.Detail != detail ||
			p.GeneratedUTC != v.GeneratedUTC || len(p.ReportSHA256) != 64 || p.DataVersion != v.DataVersion {
			t.Errorf("%s: provenance %+v", detail, p)
		}
		// The sample body records no provenance, as a report stored before
		// it was recorded: null with a flag, never made up.
		if p.EngineVersion != nil || p.DataManifestSHA256 != nil || len(p.Unrecorded) == 0 {
			t.Errorf("%s: unrecorded provenance shown as %+v", detail, p)
		}
		// Any one byte of the content changed breaks the signature: every
		// position of the document before the signature, a byte at a time.
		end := bytes.Index(doc, []byte(`,"signature":`))
		for i := 0; i < end; i += 7 {
			bad := bytes.Clone(doc)
			bad[i] ^= 0x01
			if _, err := reportverify.Verify(bad, keys); err == nil {
				t.Fatalf("%s: byte %d (%q) changed and the document still verifies", detail, i, doc[i])
			}
		}
		// The same report served again is the same bytes.
		if again := e.do("GET", reportsPath+id+"?detail="+detail, key, ""); !bytes.Equal(again.Body.Bytes(), doc) {
			t.Errorf("%s served twice differs", detail)
		}
	}

	pdf := e.do("GET", reportsPath+id+"/pdf", key, "")
	if pdf.Code != http.StatusOK {
		t.Fatalf("pdf: %d", pdf.Code)
	}
	attached, err := reportverify.FromPDF(pdf.Body.Bytes())
	if err != nil {
		t.Fatalf("the PDF carries no signed JSON: %v", err)
	}
	res, err := reportverify.Verify(attached, keys)
	if err != nil {
		t.Fatalf("the PDF's JSON does not verify: %v", err)
	}
	var full struct{ Detail string }
	if json.Unmarshal(attached, &full); full.Detail != "full" {
		t.Errorf("the PDF carries detail %q, want full", full.Detail)
	}
	if res.KeyID != published.Keys[0].KeyID {
		t.Errorf("the PDF's JSON is signed by %s", res.KeyID)
	}
}

// TestSigningKeyRotation: after `signing-keys rotate` (the store's
// RotateSigningKey), the server signs with the new key within
// signing.Refresh; the old key stays published, retired, and what it
// signed still verifies.
func TestSigningKeyRotation(t *testing.T) {
	e := newEnv(t)
	key := e.allScopesKey(e.account(1000, 100000))
	id := e.complete(e.createJob(key, 37.77, -122.42).JobID)
	before := e.do("GET", reportsPath+id, key, "").Body.Bytes()

	next, err := locrisk.NewSigningKey(e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.RotateSigningKey(t.Context(), next); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(signing.Refresh + time.Second)
	after := e.do("GET", reportsPath+id, key, "").Body.Bytes()
	keys, err := reportverify.ParseKeySet(e.do("GET", view.SigningKeysPath, "", "").Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	resBefore, err := reportverify.Verify(before, keys)
	if err != nil {
		t.Fatalf("the report signed before the rotation no longer verifies: %v", err)
	}
	resAfter, err := reportverify.Verify(after, keys)
	if err != nil {
		t.Fatal(err)
	}
	if resAfter.KeyID != next.ID || resBefore.KeyID == next.ID {
		t.Errorf("signed by %s before and %s after; the new key is %s", resBefore.KeyID, resAfter.KeyID, next.ID)
	}
	if resBefore.Key.RetiredUTC.IsZero() {
		t.Error("the old key is not shown retired")
	}
	// Only the published keys verify: an empty set knows no key.
	if _, err := reportverify.Verify(after, reportverify.KeySet{}); !errors.Is(err, reportverify.ErrUnknownKey) {
		t.Errorf("verify without keys: %v, want ErrUnknownKey", err)
	}
}
