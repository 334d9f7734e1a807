package main

// `locrisk report verify` and `report replay`: an auditor's checks of a
// saved report, offline (docs/verification.md). Neither needs a database;
// verify needs the public keys, replay the engine and its data.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/locrisk/locrisk/internal/refcache"
	"github.com/locrisk/locrisk/internal/replay"
	"github.com/locrisk/locrisk/internal/risk"
	"github.com/locrisk/locrisk/internal/view"
	"github.com/locrisk/locrisk/reportverify"
)

// maxReportFile bounds what verify and replay read: a report's JSON is
// about 50 kB and its PDF a few hundred.
const maxReportFile = 64 << 20

func (c *cli) reportVerify(args []string) error {
	var keysFile, keyFile, keysURL string
	var printSigned bool
	f := c.newFlags("report verify", "(--keys FILE | --key FILE.pem | --keys-url URL) FILE", `
Checks the signature of a saved report, JSON (summary or full) or PDF,
against the service's public keys. A PDF is checked whole: the signed JSON
it carries, and the signature of its pages, which covers every page, its
outline and attachments and that JSON, so an edited page, an added
incremental update or a removed attachment fails with the reason;
--attachment-only checks the carried JSON alone (for a PDF served before
pages were signed). Keys are given offline with --keys a file of GET /.well-known/locrisk-signing-keys (or of
'locrisk signing-keys list --json'), --key one PEM public key, or
--keys-url the well-known address of a server, such as
http://127.0.0.1:8080/.well-known/locrisk-signing-keys (fetched once; the
only option that uses the network). Prints the key that signed, the SHA-256 of
the signed bytes and the report's provenance; exit status 1 and the reason
when the report does not verify.

--print-signed-bytes writes the bytes the signature covers (the RFC 8785
form of the document without its signature member) to standard output
instead, and checks nothing: openssl can then check the signature itself
(docs/verification.md).`, `
  locrisk report verify --keys keys.json summary.json
  locrisk report verify --key key.pem chicago.pdf
  locrisk report verify --print-signed-bytes summary.json > signed.bin`)
	var attachmentOnly bool
	f.StringVar(&keysFile, "keys", "", "`file` of the published keys (JSON)")
	f.StringVar(&keyFile, "key", "", "`file` with one PEM public key")
	f.StringVar(&keysURL, "keys-url", "", "`URL` of a server's published keys")
	f.BoolVar(&printSigned, "print-signed-bytes", false, "print the signed bytes and check nothing")
	f.BoolVar(&attachmentOnly, "attachment-only", false, "for a PDF, check only the signed JSON it carries, not its pages")
	path, raw, err := f.reportFileArg(args)
	if err != nil {
		return err
	}
	isPDF := isPDFFile(raw)
	doc := raw
	if isPDF && (printSigned || attachmentOnly) {
		if doc, err = jsonOfPDF(path, raw); err != nil {
			return err
		}
	}
	if printSigned {
		signed, err := reportverify.SignedBytes(doc)
		if err != nil {
			return err
		}
		_, err = c.stdout.Write(signed)
		return err
	}
	given := 0
	for _, s := range []string{keysFile, keyFile, keysURL} {
		if s != "" {
			given++
		}
	}
	if given != 1 {
		return usagef("give the public keys with exactly one of --keys, --key and --keys-url")
	}
	keys, err := c.loadKeySet(keysFile, keyFile, keysURL)
	if err != nil {
		return err
	}
	var res reportverify.Result
	var pages reportverify.PDFResult
	if isPDF && !attachmentOnly {
		pages, err = reportverify.VerifyPDF(raw, keys)
		if err != nil {
			if pages.JSON.KeyID != "" {
				// The carried JSON held; say so beside what did not.
				return fmt.Errorf("%s does not verify: its attached JSON verifies (key %s), but %w", path, pages.JSON.KeyID, err)
			}
			return fmt.Errorf("%s does not verify: %w", path, err)
		}
		res, doc = pages.JSON, pages.Attachment
	} else if res, err = reportverify.Verify(doc, keys); err != nil {
		return fmt.Errorf("%s does not verify: %w", path, err)
	}
	fmt.Fprintf(c.stdout, "verified: %s\n", path)
	switch {
	case isPDF && attachmentOnly:
		fmt.Fprintf(c.stdout, "pages:        not checked (--attachment-only): only the signed JSON the PDF carries was verified\n")
	case isPDF:
		fmt.Fprintf(c.stdout, "pages:        %s as the service rendered them, with the outline and the attached JSON: their signature holds (key %s)\n",
			plural(pages.Pages, "page"), pages.PagesKeyID)
	}
	validity := "current since " + apiTime(res.Key.CreatedUTC)
	if res.Key.CreatedUTC.IsZero() {
		validity = "the key given as PEM; its validity is listed where the keys are published"
	} else if !res.Key.RetiredUTC.IsZero() {
		validity = "created " + apiTime(res.Key.CreatedUTC) + ", retired " + apiTime(res.Key.RetiredUTC)
	}
	fmt.Fprintf(c.stdout, "signed by:    %s (Ed25519; %s)\n", res.KeyID, validity)
	fmt.Fprintf(c.stdout, "signed bytes: SHA-256 %s\n", res.SignedSHA256)
	var d struct {
		ReportID, JobID, Detail, GeneratedUTC string
		Provenance                            view.Provenance
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		// The signature held, so the document is JSON; a report always
		// decodes into these members.
		return fmt.Errorf("%s verifies but is not a report document: %w", path, err)
	}
	if d.ReportID != "" {
		p := d.Provenance
		fmt.Fprintf(c.stdout, "report:       %s (detail %s), job %s, generated %s\n", d.ReportID, d.Detail, d.JobID, d.GeneratedUTC)
		fmt.Fprintf(c.stdout, "coordinate:   %v, %v\n", p.Inputs.Latitude, p.Inputs.Longitude)
		fmt.Fprintf(c.stdout, "made by:      engine %s, methodology %s, data %s (manifest %s)\n",
			orNotRecorded(p.EngineVersion), orNotRecorded(p.MethodologyVersion), p.DataVersion, orNotRecorded(p.DataManifestSHA256))
	}
	return nil
}

func orNotRecorded(s *string) string {
	if s == nil {
		return "not recorded"
	}
	return *s
}

// loadKeySet reads the public keys from the one source given.
func (c *cli) loadKeySet(keysFile, keyFile, keysURL string) (reportverify.KeySet, error) {
	switch {
	case keysFile != "":
		b, err := os.ReadFile(keysFile)
		if err != nil {
			return reportverify.KeySet{}, err
		}
		return reportverify.ParseKeySet(b)
	case keyFile != "":
		b, err := os.ReadFile(keyFile)
		if err != nil {
			return reportverify.KeySet{}, err
		}
		return reportverify.ParsePublicKeyPEM(b, "")
	default:
		ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, keysURL, nil)
		if err != nil {
			return reportverify.KeySet{}, usagef("--keys-url: %v", err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return reportverify.KeySet{}, fmt.Errorf("fetching the keys: %w", err)
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return reportverify.KeySet{}, fmt.Errorf("fetching the keys: %s answered %s", keysURL, res.Status)
		}
		b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		if err != nil {
			return reportverify.KeySet{}, fmt.Errorf("fetching the keys: %w", err)
		}
		return reportverify.ParseKeySet(b)
	}
}

// reportFileArg parses the flags and the one report file the command
// takes, and reads the file as it is (JSON or PDF).
func (f *flags) reportFileArg(args []string) (path string, raw []byte, err error) {
	pos, err := f.parse(positionalsLast(f.FlagSet, args))
	if err != nil {
		return "", nil, err
	}
	if len(pos) != 1 {
		return "", nil, usagef("want one report file (JSON or PDF), got %s", plural(len(pos), "argument"))
	}
	raw, err = readReportFile(pos[0])
	return pos[0], raw, err
}

func isPDFFile(b []byte) bool { return bytes.HasPrefix(b, []byte("%PDF-")) }

// jsonOfPDF is the signed JSON a saved PDF carries.
func jsonOfPDF(path string, raw []byte) ([]byte, error) {
	doc, err := reportverify.FromPDF(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc, nil
}

// readReportFile reads a saved report file, bounded.
func readReportFile(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, maxReportFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxReportFile {
		return nil, fmt.Errorf("%s is larger than %d MiB; a report is far smaller", path, maxReportFile>>20)
	}
	return b, nil
}

func (c *cli) reportReplay(args []string) error {
	var dataDir, refCache string
	f := c.newFlags("report replay", "[--data-dir DIR] [--reference-cache FILE] FILE", `
Recomputes a saved report (JSON or PDF) from the coordinate and detail it
records, with this binary's engine and the built-in data or the pack in
--data-dir, and compares: "identical" when the result is the file's
document (byte for byte with the same binary and data, signature aside),
else each field that differs, with both values, and why it may (a
different data, methodology or engine version than the report records),
with exit status 1. It needs no database or network and does not check the
signature ('report verify' does). Loading the data builds the engine's
reference, several seconds; --reference-cache keeps it between runs.`, `
  locrisk report replay summary.json
  locrisk report replay --data-dir ./pack chicago.pdf`)
	f.StringVar(&dataDir, "data-dir", "", dataFlagUsage)
	f.StringVar(&refCache, "reference-cache", "", "keep the engine's reference distributions in `file` between runs")
	path, doc, err := f.reportFileArg(args)
	if err != nil {
		return err
	}
	if isPDFFile(doc) {
		if doc, err = jsonOfPDF(path, doc); err != nil {
			return err
		}
	}
	log := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	dataFS, dataName, err := checkedDataPack(dataDir)
	if err != nil {
		return err
	}
	var cache risk.ReferenceCache
	if refCache != "" {
		cache = refcache.File{Path: refCache}
	}
	eng, err := risk.Load(c.ctx, dataFS, log, cache)
	if err != nil {
		return fmt.Errorf("loading data from %s: %w", dataName, err)
	}
	res, err := replay.Run(c.ctx, eng, doc)
	if errors.Is(err, risk.ErrUnsupportedLocation) {
		return fmt.Errorf("the report's coordinate is outside this data's coverage: %w", err)
	}
	if err != nil {
		return err
	}
	digest := "engine output SHA-256 " + res.ReportSHA256
	switch res.RecordedSHA256 {
	case res.ReportSHA256:
		digest += ", as the report records"
	case "":
		digest += "; the report records none"
	default:
		digest += fmt.Sprintf("; the report records %s", res.RecordedSHA256)
	}
	if res.Identical {
		how := "byte for byte (signature aside)"
		if !res.ByteForByte {
			how = "member for member (the file was re-encoded since it was served)"
		}
		fmt.Fprintf(c.stdout, "identical: the recomputed report is %s's document %s\n%s\n", path, how, digest)
		return nil
	}
	n := fmt.Sprint(len(res.Differences))
	if res.Truncated {
		n = "more than " + n
	}
	fmt.Fprintf(c.stdout, "differs: %s fields of the recomputed report differ from %s\n", n, path)
	for _, d := range res.Differences {
		fmt.Fprintf(c.stdout, "  %s\n    report: %s\n    replay: %s\n", d.Path, orAbsent(d.Document), orAbsent(d.Replay))
	}
	fmt.Fprintln(c.stdout, digest)
	if len(res.Reasons) == 0 {
		fmt.Fprintln(c.stdout, "why: the report records the same data, methodology and engine versions as this binary's, so it was changed after it was made")
	} else {
		fmt.Fprintln(c.stdout, "why: "+strings.Join(res.Reasons, "; "))
	}
	return errors.New("the recomputed report differs")
}

func orAbsent(s string) string {
	if s == "" {
		return "(absent)"
	}
	return s
}
