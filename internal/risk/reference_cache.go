package risk

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/locrisk/locrisk/internal/risk/coverage"
)

// ReferenceCache keeps the reference distributions between runs, keyed by
// data version and methodology, so only the first start after a data change
// pays for measuring every census tract. The store implements it.
type ReferenceCache interface {
	// LoadReference returns the body saved under key, or nil when none is.
	LoadReference(ctx context.Context, key string) ([]byte, error)
	// SaveReference saves body under key, replacing other keys.
	SaveReference(ctx context.Context, key string, body []byte) error
}

// referenceFormat changes whenever the cached encoding changes.
const referenceFormat = 3

// referenceKey names the cached reference for a data version and a build
// of the engine: the methodology version says what the scores mean, the
// build fingerprint catches any change to the code that computes them, so
// a new binary builds its reference once rather than trust one it did not
// make.
func referenceKey(dataVersion, build string) string {
	return fmt.Sprintf("%s/%s/format-%d/%s", dataVersion, MethodologyVersion, referenceFormat, build)
}

// buildFingerprint identifies the running executable by the SHA-256 of its
// file (about 50 ms to read); "unknown" where it cannot be read.
func buildFingerprint() string {
	path, err := os.Executable()
	if err != nil {
		return "build-unknown"
	}
	f, err := os.Open(path)
	if err != nil {
		return "build-unknown"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "build-unknown"
	}
	return "build-" + hex.EncodeToString(h.Sum(nil))[:12]
}

// cachedReference is what the reference cache held for this data version
// and build: a decoded reference, nothing (ref and err nil), or why it
// could not be read or used.
type cachedReference struct {
	ref     *reference
	readErr error // the cache could not be read
	err     error // it held something unusable
}

// readCachedReference reads and decodes the cached reference in the
// background and delivers it on the channel (nothing without a cache).
func (e *Engine) readCachedReference(ctx context.Context, cache ReferenceCache) <-chan cachedReference {
	out := make(chan cachedReference, 1)
	if cache == nil {
		out <- cachedReference{}
		return out
	}
	go func() {
		body, err := cache.LoadReference(ctx, referenceKey(e.dataVersion, buildFingerprint()))
		switch {
		case err != nil:
			out <- cachedReference{readErr: err}
		case body == nil:
			out <- cachedReference{}
		default:
			ref, err := e.decodeReference(body)
			out <- cachedReference{ref: ref, err: err}
		}
	}()
	return out
}

// loadReference uses the cached reference or builds and saves one; it
// reports whether the cache held it. A cache that cannot be read or written
// costs time, not correctness: the reference is built and the cause logged.
func (e *Engine) loadReference(ctx context.Context, tracts []coverage.Tract, logger *slog.Logger, cache ReferenceCache, got cachedReference, trace *referenceTrace) (bool, error) {
	switch {
	case got.readErr != nil:
		logger.Warn("reference cache unreadable; rebuilding", "err", got.readErr)
	case got.err != nil:
		logger.Warn("cached reference unusable; rebuilding", "err", got.err)
	case got.ref != nil:
		e.ref = got.ref
		return true, nil
	}
	logger.Info("building the population-weighted reference (first start with this data version)", "tracts", len(tracts), "data_version", e.dataVersion)
	ref, err := e.buildReference(ctx, tracts, logger, trace)
	if err != nil {
		return false, err
	}
	e.ref = ref
	if cache != nil {
		body, err := e.encodeReference(ref)
		if err == nil {
			err = cache.SaveReference(ctx, referenceKey(e.dataVersion, buildFingerprint()), body)
		}
		if err != nil {
			logger.Warn("reference not cached; the next start rebuilds it", "err", err)
		}
	}
	return false, nil
}

// referenceFile is the cached form of a reference.
type referenceFile struct {
	Format     int
	Names      []string
	Index      []int // Names[i] is Dists[Index[i]]: equal distributions are kept once
	Dists      []distribution
	Divergence []float64
	Tracts     int
	Population float64
	Unlocated  int
}

func (e *Engine) encodeReference(r *reference) ([]byte, error) {
	f := referenceFile{Format: referenceFormat, Divergence: r.divergence, Tracts: r.tracts, Population: r.population, Unlocated: r.unlocated}
	var pool distributionPool
	add := func(name string, d *distribution) {
		i, _ := pool.index(d)
		if i == len(f.Dists) {
			f.Dists = append(f.Dists, *d)
		}
		f.Names = append(f.Names, name)
		f.Index = append(f.Index, i)
	}
	for k, d := range r.indicators {
		add("ind/"+e.specs[k.module].Key+"/"+k.id, d)
	}
	for mi, spec := range e.specs {
		for pi, p := range spec.Perils {
			add("peril/"+spec.Key+"/"+p.Key, r.perils[mi][pi])
		}
		add("module/"+spec.Key, r.modules[mi])
		add("bench/"+spec.Key, r.bench[mi])
		add("scored/"+spec.Key, r.scored[mi])
	}
	for code, d := range r.nri {
		add("nri/"+code, d)
	}
	add("overall", r.overall)
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(&f); err != nil {
		return nil, fmt.Errorf("encoding the reference: %w", err)
	}
	return b.Bytes(), nil
}

func (e *Engine) decodeReference(body []byte) (*reference, error) {
	var f referenceFile
	if err := gob.NewDecoder(bytes.NewReader(body)).Decode(&f); err != nil {
		return nil, fmt.Errorf("decoding the cached reference: %w", err)
	}
	if f.Format != referenceFormat || len(f.Names) != len(f.Index) || len(f.Divergence) != len(e.specs) {
		return nil, errors.New("the cached reference has another format")
	}
	r := &reference{
		indicators: map[indKey]*distribution{}, nri: map[string]*distribution{},
		perils: make([][]*distribution, len(e.specs)), modules: make([]*distribution, len(e.specs)),
		bench: make([]*distribution, len(e.specs)), scored: make([]*distribution, len(e.specs)), divergence: f.Divergence,
		tracts: f.Tracts, population: f.Population, unlocated: f.Unlocated,
	}
	moduleIndex := map[string]int{}
	for mi, spec := range e.specs {
		moduleIndex[spec.Key] = mi
		r.perils[mi] = make([]*distribution, len(spec.Perils))
	}
	for i, name := range f.Names {
		if f.Index[i] < 0 || f.Index[i] >= len(f.Dists) {
			return nil, fmt.Errorf("cached distribution %s is missing", name)
		}
		d := &f.Dists[f.Index[i]]
		if len(d.Values) != len(d.Below) {
			return nil, fmt.Errorf("cached distribution %s is inconsistent", name)
		}
		parts := strings.Split(name, "/")
		mi, known := 0, false
		if len(parts) >= 2 {
			mi, known = moduleIndex[parts[1]]
		}
		switch {
		case parts[0] == "overall" && len(parts) == 1:
			r.overall = d
		case parts[0] == "nri" && len(parts) == 2:
			r.nri[parts[1]] = d
		case parts[0] == "ind" && len(parts) == 3 && known:
			r.indicators[indKey{mi, parts[2]}] = d
		case parts[0] == "module" && len(parts) == 2 && known:
			r.modules[mi] = d
		case parts[0] == "bench" && len(parts) == 2 && known:
			r.bench[mi] = d
		case parts[0] == "scored" && len(parts) == 2 && known:
			r.scored[mi] = d
		case parts[0] == "peril" && len(parts) == 3 && known && perilIndex(&e.specs[mi], parts[2]) >= 0:
			r.perils[mi][perilIndex(&e.specs[mi], parts[2])] = d
		default:
			return nil, fmt.Errorf("cached reference has an unknown distribution %q", name)
		}
	}
	if r.overall == nil {
		return nil, errors.New("cached reference lacks the overall distribution")
	}
	for mi := range e.specs {
		if r.modules[mi] == nil || r.bench[mi] == nil || r.scored[mi] == nil {
			return nil, errors.New("cached reference lacks a module distribution")
		}
		for pi := range r.perils[mi] {
			if r.perils[mi][pi] == nil {
				return nil, errors.New("cached reference lacks a peril distribution")
			}
		}
	}
	return r, nil
}
