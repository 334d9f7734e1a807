// The report page: one report, as the API serves it with detail=full,
// drawn as its site maps, overall score and a card per module, and its
// Ed25519 signature checked in this browser against the keys the server
// publishes (docs/console.md, The report page; docs/verification.md).
'use strict';

(() => {
  if (!LR.ready) return;
  const { h, svg } = LR;
  const id = document.getElementById('main').dataset.id;
  const $ = (x) => document.getElementById(x);

  // ---- words ----

  const resolutions = {
    site: 'at the site',
    grid: 'model grid',
    place_table: 'interpolated between listed places',
    county_allocated: 'county figures allocated to the site',
    reported_events: 'reported events',
    county: 'county-level',
    mixed: 'mixed resolutions',
  };
  const bases = {
    hazard_data: 'hazard data',
    nri_fallback: 'FEMA National Risk Index (no hazard layer covers the site)',
    no_data: 'no data',
  };
  function confidence(c) {
    return c ? c.level + ' (' + LR.num(c.score, 2) + ')' : '–';
  }
  function ordinal(n) {
    const v = Math.round(n);
    const s = (v % 100 >= 11 && v % 100 <= 13) ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' }[v % 10] || 'th');
    return v + s;
  }
  // value writes an indicator's number as the API gives it: whole counts
  // exact, other values to their four significant digits.
  function value(v) {
    return Number.isInteger(v) ? v.toLocaleString('en-US') : v.toLocaleString('en-US', { maximumSignificantDigits: 4 });
  }
  function indicatorValue(ind) {
    const parts = [];
    if (ind.value !== null && ind.value !== undefined && ind.unit !== 'name') {
      parts.push(value(ind.value) + (ind.unit && ind.unit !== 'index' && ind.unit !== 'count' ? ' ' + ind.unit : ''));
    }
    if (ind.text) parts.push(parts.length ? '(' + ind.text + ')' : ind.text);
    return parts.join(' ') || 'no value';
  }

  // scoreBar shows a score as a bar beside its number; the number and the
  // level's words carry it, the bar only repeats them.
  function scoreBar(score, level) {
    const bar = h('span', { class: 'bar lvl-bar-' + (level || 'none'), 'aria-hidden': 'true' }, h('span', { class: 'bar-fill' }));
    if (score !== null && score !== undefined) bar.firstChild.style.width = Math.max(0, Math.min(100, score)) + '%';
    return bar;
  }

  // ---- rendering ----

  function render(doc) {
    const s = doc.summary;
    const loc = doc.location;
    document.title = loc.countyName + ', ' + loc.stateName + ' · report · locrisk console';
    $('place').textContent = loc.countyName + ', ' + loc.stateName;
    $('coord').replaceChildren(LR.coord(loc.latitude, loc.longitude), ' · generated ', LR.time(doc.generatedUtc),
      ' · data ', h('code', {}, doc.dataVersion || '–'));

    // Overall.
    const driver = s.overallDriver;
    $('overall').append(
      h('div', { class: 'overall-score' },
        h('span', { class: 'big-score' }, s.overallScore), h('span', { class: 'of' }, '/100'),
        LR.levelTag(s.riskLevel)),
      scoreBar(s.overallScore, s.riskLevel),
      h('p', {}, driver
        ? ['Driven by ', h('strong', {}, LR.moduleWords(driver)), ': ', s.moduleScores[driver], ', ', LR.levelWords(levelOf(s.moduleScores[driver])).toLowerCase(), '.']
        : 'No module is scored here.'),
      h('p', { class: 'muted' }, 'Confidence ', confidence(s.confidence), '. Scores are population-weighted percentiles: 80 means more hazardous than 80% of US residents.'),
      h('ul', { class: 'module-list', 'aria-label': 'Module scores' }, LR.moduleOrder.map((m) => {
        const v = s.moduleScores[m];
        return h('li', {}, h('a', { href: '#card-' + m }, LR.moduleWords(m)), ' ',
          v === null ? h('span', { class: 'muted' }, 'no data') : [h('strong', {}, v), ' ', LR.levelTag(levelOf(v))]);
      })));

    // Top risks.
    $('top-risks').replaceChildren(s.topRisks.length
      ? h('ol', { class: 'top-risks' }, s.topRisks.map((t) => h('li', {},
        h('strong', {}, LR.moduleWords(t.module)), ' ', t.score, ' ', LR.levelTag(t.riskLevel), h('br'), t.reason)))
      : h('p', { class: 'muted' }, 'No module is at moderate or above.'));

    // Module cards.
    const modules = (doc.report && doc.report.modules) || {};
    $('cards').replaceChildren(...LR.moduleOrder.map((m) => card(m, modules[m], s)));

    // The outlook (docs/api.md, Reports): after the cards, context only.
    outlook(doc);

    // Review flags about the location (those of a module are on its card).
    const general = s.reviewFlags.filter((f) => !f.module);
    $('flags').replaceChildren(general.length
      ? h('ul', { class: 'flags' }, general.map(flagItem))
      : h('p', { class: 'muted' }, 'None.'));

    // Files.
    $('files-paths').replaceChildren('API paths (with your key): ', h('code', {}, s.links.pdf), ' and ', h('code', {}, s.links.full), '.');

    // Provenance.
    const p = doc.provenance || {};
    $('provenance').replaceChildren(...fact('Report', h('code', {}, doc.reportId)), ...fact('Job', h('code', {}, doc.jobId)),
      ...fact('Engine version', p.engineVersion), ...fact('Methodology', p.methodologyVersion),
      ...fact('Data version', p.dataVersion), ...fact('Data manifest SHA-256', h('code', { class: 'hash' }, p.dataManifestSha256 || '–')),
      ...fact('Engine output SHA-256', h('code', { class: 'hash' }, p.reportSha256 || '–')),
      ...fact('Generated', LR.time(p.generatedUtc)));
  }

  function levelOf(score) {
    if (score === null || score === undefined) return null;
    return score < 20 ? 'very_low' : score < 40 ? 'low' : score < 60 ? 'moderate' : score < 80 ? 'high' : 'very_high';
  }

  function fact(name, value) {
    return [h('dt', {}, name), h('dd', {}, value === null || value === undefined || value === '' ? '–' : value)];
  }

  function flagItem(f) {
    return h('li', {}, h('span', { class: 'flag-mark', 'aria-hidden': 'true' }, '⚑'), ' ', f.message, ' ', h('code', { class: 'muted' }, f.code));
  }

  function card(m, mod, s) {
    const score = s.moduleScores[m];
    const level = mod ? mod.riskLevel : levelOf(score);
    const head = h('div', { class: 'card-head' },
      h('h3', {}, LR.moduleWords(m)),
      h('p', { class: 'card-score' }, score === null ? h('span', { class: 'muted' }, 'no data') : h('span', { class: 'score' }, score), ' ', LR.levelTag(score === null ? null : level)));
    const body = [head, scoreBar(score, score === null ? null : level)];
    if (!mod) {
      body.push(h('p', { class: 'muted' }, 'The full report has no section for this module.'));
    } else {
      body.push(h('p', { class: 'muted' }, 'Confidence ', confidence(mod.confidence), ' · basis: ', bases[mod.basis] || mod.basis));
      const perils = mod.perils || [];
      const inds = mod.indicators || [];
      if (perils.length) {
        body.push(h('h4', {}, 'What drives it'));
        body.push(h('ul', { class: 'perils' }, perils.map((p) => {
          // The peril's indicator ranked highest drives it most; the
          // rest are in the table below.
          const own = inds.filter((i) => i.peril === p.peril && i.percentile !== null && i.percentile !== undefined)
            .sort((a, b) => b.percentile - a.percentile).slice(0, 1);
          return h('li', {},
            h('div', { class: 'peril-head' }, h('strong', {}, p.title), ' ',
              p.score === null ? h('span', { class: 'muted' }, 'no data') : [p.score, ' ', LR.levelTag(p.riskLevel)]),
            h('div', { class: 'muted small' }, resolutions[p.resolution] || p.resolution || 'resolution not stated', ' · confidence ', confidence(p.confidence),
              p.annualProbability !== null && p.annualProbability !== undefined
                ? ' · about 1 in ' + LR.num(p.returnPeriodYears, 0) + ' a year' + (p.chanceOf ? ' (' + p.chanceOf + ')' : '')
                : ''),
            own.length ? h('ul', { class: 'indicators' }, own.map(indicatorItem)) : null);
        })));
      }
      const recs = s.recommendations.filter((r) => r.module === m);
      if (recs.length) {
        body.push(h('h4', {}, 'Recommendations'));
        body.push(h('ul', { class: 'recs' }, recs.map((r) => h('li', {}, h('span', { class: 'prio prio-' + r.priority }, r.priority + ' priority'), ' ', r.text))));
      }
      const flags = s.reviewFlags.filter((f) => f.module === m);
      if (flags.length) {
        body.push(h('h4', {}, 'Review flags'));
        body.push(h('ul', { class: 'flags' }, flags.map(flagItem)));
      }
      if (mod.narrative) {
        body.push(h('details', {}, h('summary', {}, 'Assessment'), h('p', {}, mod.narrative)));
      }
      if (inds.length) {
        body.push(h('details', {}, h('summary', {}, 'All ' + inds.length + ' indicators'),
          LR.table(LR.moduleWords(m) + ' indicators', ['Indicator', 'Value', 'Percentile', 'Resolution', 'Source'],
            inds.map((i) => h('tr', {},
              h('td', {}, i.label),
              h('td', {}, indicatorValue(i)),
              h('td', {}, i.percentile === null || i.percentile === undefined ? '–' : ordinal(i.percentile)),
              h('td', {}, resolutions[i.resolution] || i.resolution || '–', i.resolutionDetail ? h('span', { class: 'muted' }, ' (' + i.resolutionDetail + ')') : null),
              h('td', {}, h('code', {}, i.source), i.vintage ? h('span', { class: 'muted' }, ' ' + i.vintage) : null))))));
      }
    }
    return h('section', { class: 'card', id: 'card-' + m, 'data-module': m, 'aria-label': LR.moduleWords(m) }, body);
  }

  // ---- the outlook (docs/methodology.md, Outlook) ----

  const outlookHazards = ['coastalFlooding', 'drought', 'extremeHeat', 'hurricane', 'wildfire'];
  const outlookScenarios = [
    ['midCenturyLowerWarming', 'Mid-century, lower warming'],
    ['midCenturyHigherWarming', 'Mid-century, higher warming'],
    ['lateCenturyLowerWarming', 'Late century, lower warming'],
    ['lateCenturyHigherWarming', 'Late century, higher warming'],
  ];
  const outlookReasons = {
    not_applicable: 'FEMA rates the hazard "Not Applicable" in this county today',
    insufficient_data: 'FEMA has insufficient data for it here',
    no_projection: 'FEMA gives no projection for it here',
  };

  // projected writes one hazard under one scenario: the multiplier and
  // the projected score, or FEMA's rating where it gives no number.
  function projected(sc) {
    const mult = sc.hazardMultiplier === null || sc.hazardMultiplier === undefined
      ? h('span', { class: 'muted' }, 'no multiplier (' + (sc.multiplierRating || 'not given') + ')')
      : h('strong', {}, '×' + value(sc.hazardMultiplier));
    const score = sc.riskScore === null || sc.riskScore === undefined
      ? h('span', { class: 'muted' }, 'no score (' + (sc.riskRating || 'not given') + ')')
      : ['score ', value(sc.riskScore), h('span', { class: 'muted' }, ' ' + (sc.riskRating || ''))];
    return [mult, h('br'), h('span', { class: 'small' }, score)];
  }

  // outlook fills the Outlook section: FEMA's projections for the county
  // when the report has them, the reason when they are null, and nothing
  // for a report made before the outlook existed (neither member).
  function outlook(doc) {
    const r = doc.report || {};
    const sec = $('outlook-section');
    const box = $('outlook');
    if (!('outlook' in r)) {
      sec.hidden = true;
      return;
    }
    sec.hidden = false;
    const o = r.outlook;
    if (!o) {
      const why = r.outlookUnavailable || doc.summary.outlookUnavailable;
      box.replaceChildren(h('p', { class: 'muted', id: 'outlook-unavailable' },
        'No outlook for this site: ', why ? why.message : 'the report does not say why.',
        why ? [' ', h('code', {}, why.code)] : null));
      return;
    }
    const columns = ['Hazard', 'Module', 'Today', ...outlookScenarios.map(([, t]) => t)];
    const rows = outlookHazards.filter((k) => o.hazards[k]).map((k) => {
      const hz = o.hazards[k];
      const cur = hz.current || {};
      const cells = [
        h('th', { scope: 'row' }, hz.title, hz.projection ? h('span', { class: 'muted small' }, ' (' + hz.projection + ' projection)') : null),
        h('td', {}, hz.module ? h('a', { href: '#card-' + hz.module }, LR.moduleWords(hz.module)) : h('span', { class: 'muted' }, 'none (outlook only)')),
        h('td', {}, cur.riskScore === null || cur.riskScore === undefined
          ? h('span', { class: 'muted' }, 'no score (' + (cur.riskRating || 'not given') + ')')
          : ['score ', value(cur.riskScore), h('span', { class: 'muted' }, ' ' + (cur.riskRating || ''))]),
      ];
      if (hz.scenarios) {
        for (const [key] of outlookScenarios) cells.push(h('td', {}, projected(hz.scenarios[key])));
      } else {
        cells.push(h('td', { colspan: outlookScenarios.length, class: 'muted', 'data-label': 'Projections' },
          'No projections: ', outlookReasons[hz.reason] || hz.reason || 'not given', '.'));
      }
      return h('tr', { 'data-hazard': k }, cells);
    });
    const tbl = LR.table('Outlook: FEMA projections by hazard and scenario', columns, rows);
    // A row without projections has one cell for the four scenarios.
    tbl.querySelectorAll('td[colspan]').forEach((td) => { td.dataset.label = 'Projections'; });
    box.replaceChildren(
      h('p', { class: 'outlook-note' }, o.note),
      h('p', { class: 'help' }, 'Each scenario shows FEMA\'s hazard multiplier (×, the factor on the county\'s current expected annual loss from the hazard; 1 is no change) and its projected risk index score: 0-100, a rank among counties in the same scenario, not among residents, so not on the scale of this report\'s scores.'),
      tbl,
      h('dl', { class: 'facts outlook-facts' },
        ...fact('County', [o.countyName, ' ', h('code', {}, o.countyFips), ' · county resolution: every site in the county has this outlook',
          o.countyNote ? [h('br'), o.countyNote] : null]),
        ...fact('Source', [o.name, ', ', o.publisher, ' ', h('code', {}, o.source)]),
        ...fact('Vintage', o.vintage),
        ...fact('Withdrawn', o.withdrawal)));
  }

  function indicatorItem(i) {
    return h('li', {}, i.label, ': ', h('strong', {}, indicatorValue(i)),
      i.percentile !== null && i.percentile !== undefined ? ' · ' + ordinal(i.percentile) + ' percentile' : '',
      h('span', { class: 'muted' }, ' · ', resolutions[i.resolution] || i.resolution || 'resolution not stated',
        i.resolutionDetail ? ' (' + i.resolutionDetail + ')' : ''));
  }

  // ---- the site maps (countymap.go) ----

  async function drawMaps(loc) {
    const box = $('sitemaps');
    let maps;
    try {
      const res = await fetch('/console/geo/counties/' + encodeURIComponent(loc.countyFips), { credentials: 'omit' });
      if (!res.ok) throw new Error('no outline for county ' + loc.countyFips + ' (' + res.status + ')');
      maps = await res.json();
    } catch (e) {
      box.replaceChildren(h('p', { class: 'muted' }, 'The map could not be drawn: ' + e.message));
      return;
    }
    const site = { lat: loc.latitude, lon: loc.longitude };
    box.replaceChildren(
      siteMap(maps.state, site, loc.stateName + ' with ' + loc.countyName + ' shaded and the site marked', loc.stateName),
      siteMap(maps.county, site, loc.countyName + ' with the site marked', loc.countyName));
  }

  function siteMap(m, site, label, caption) {
    const p = m.projection;
    const lon = p.lon0 + (((site.lon - p.lon0 + 180) % 360 + 360) % 360 - 180);
    const x = p.offX + (lon - p.minLon) * p.kx * p.scale;
    const y = p.offY + (p.maxLat - site.lat) * p.scale;
    const el = svg('svg', { viewBox: '0 0 ' + m.width + ' ' + m.height, role: 'img', 'aria-label': label, class: 'sitemap' },
      svg('title', {}, label),
      m.state ? svg('path', { d: m.state, class: 'sm-state' }) : null,
      svg('path', { d: m.county, class: m.state ? 'sm-county' : 'sm-county sm-county-alone' }),
      svg('g', { class: 'marker', transform: 'translate(' + x.toFixed(1) + ' ' + y.toFixed(1) + ')' },
        svg('circle', { r: 8, class: 'marker-halo' }), svg('circle', { r: 4, class: 'marker-dot' })));
    return h('figure', { class: 'sitemap-fig' }, el, h('figcaption', {}, caption));
  }

  // ---- the signature (docs/verification.md) ----

  // canonical is the RFC 8785 form of a JSON value as JSON.parse gave it:
  // members sorted by name as UTF-16 code units (what sort() compares),
  // no whitespace, and strings and numbers as JSON.stringify writes them,
  // which is what RFC 8785 prescribes.
  function canonical(v) {
    if (v === null || typeof v !== 'object') return JSON.stringify(v);
    if (Array.isArray(v)) return '[' + v.map(canonical).join(',') + ']';
    return '{' + Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + canonical(v[k])).join(',') + '}';
  }

  function fromBase64(s) {
    if (typeof s !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) return null;
    const bin = atob(s);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    // Strict, as the Go verifier: the unused bits of the last character
    // must be zero, so one signature has one spelling.
    return btoa(bin) === s ? out : null;
  }
  function hex(buf) {
    return Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, '0')).join('');
  }

  // verify checks doc (the report as received) and returns what it found:
  // {state: 'verified' | 'failed' | 'unchecked', reason, checks: [[what, result]]}.
  async function verify(doc, keysPromise) {
    const checks = [];
    const sig = doc.signature;
    const out = (state, reason) => ({ state, reason, checks });
    if (!sig || typeof sig !== 'object') return out('failed', 'the report carries no signature');
    const names = Object.keys(sig).sort().join(',');
    if (names !== 'algorithm,canonicalization,keyId,value' || Object.values(sig).some((v) => typeof v !== 'string')) {
      return out('failed', 'the signature member is not the four strings algorithm, keyId, canonicalization, value');
    }
    checks.push(['Signature', sig.algorithm + ' over the canonical form (' + (sig.canonicalization === 'RFC8785' ? 'RFC 8785' : sig.canonicalization) + '), by key ' + sig.keyId]);
    if (sig.algorithm !== 'Ed25519' || sig.canonicalization !== 'RFC8785') {
      return out('failed', 'the signature is ' + sig.algorithm + ' over ' + sig.canonicalization + ', which this page does not check');
    }
    if (!window.crypto || !crypto.subtle) {
      return out('unchecked', 'this browser offers WebCrypto only to pages served over HTTPS or from localhost, and this page is neither');
    }
    let keys;
    try {
      keys = await keysPromise;
    } catch (e) {
      return out('unchecked', 'the published keys could not be read: ' + e.message);
    }
    const key = (keys.keys || []).find((k) => k.keyId === sig.keyId);
    checks.push(['Published keys', (keys.keys || []).length + ', read from /.well-known/locrisk-signing-keys on this server']);
    if (!key) return out('failed', 'key ' + sig.keyId + ' is not among the keys this server publishes');
    checks.push(['Key', key.keyId + ', created ' + LR.time(key.createdUtc) + (key.retiredUtc ? ', retired ' + LR.time(key.retiredUtc) : ', current')]);
    const pub = fromBase64(key.publicKey);
    const raw = fromBase64(sig.value);
    if (key.algorithm !== 'Ed25519' || !pub || pub.length !== 32) return out('failed', 'the published key is not a 32-byte Ed25519 public key');
    if (!raw || raw.length !== 64) return out('failed', 'the signature value is not a base64 Ed25519 signature');
    const pubSum = hex(await crypto.subtle.digest('SHA-256', pub));
    const idMatches = key.keyId.endsWith('-' + pubSum.slice(0, 8));
    checks.push(['Key id', idMatches
      ? 'ends in the first 8 hex digits of the SHA-256 of the public key, as it should'
      : 'does not end in the first 8 hex digits of the SHA-256 of the public key (' + pubSum.slice(0, 8) + ')']);
    const rest = Object.assign({}, doc);
    delete rest.signature;
    const signed = new TextEncoder().encode(canonical(rest));
    const signedSum = hex(await crypto.subtle.digest('SHA-256', signed));
    checks.push(['Signed bytes', signed.length.toLocaleString('en-US') + ' bytes: the whole report as received, without its signature member, in RFC 8785 form; SHA-256 ' + signedSum]);
    let ok;
    try {
      const k = await crypto.subtle.importKey('raw', pub, { name: 'Ed25519' }, false, ['verify']);
      ok = await crypto.subtle.verify({ name: 'Ed25519' }, k, raw, signed);
    } catch (e) {
      return out('unchecked', 'this browser\'s WebCrypto does not offer Ed25519 (' + (e.name || e.message) + ')');
    }
    if (!ok) return out('failed', 'the signature does not match the report as received: something in it differs from what the server signed');
    if (!idMatches) return out('failed', 'the signature matches, but the key id does not belong to the key');
    return out('verified', 'the Ed25519 signature by key ' + key.keyId + ' matches the report as received');
  }

  function showVerification(v) {
    const badge = $('badge');
    const words = { verified: 'Verified', failed: 'Not verified', unchecked: 'Not checked' };
    const icons = { verified: '✓', failed: '✗', unchecked: '?' };
    badge.className = 'badge badge-' + v.state;
    badge.dataset.state = v.state;
    badge.replaceChildren(h('span', { class: 'badge-icon', 'aria-hidden': 'true' }, icons[v.state]), ' ',
      h('span', { class: 'badge-text' }, words[v.state]), ' ', h('a', { href: '#sig-heading', class: 'badge-more' }, 'what was checked'));
    const rows = [['Result', words[v.state] + ': ' + v.reason + '.'], ...v.checks];
    const warn = $('verify-warning');
    if (v.state === 'failed') {
      warn.replaceChildren(h('strong', {}, 'This report does not verify. '),
        'What this page shows is not the report the server signed, or not signed by a key it publishes: do not rely on it. ',
        h('a', { href: '#sig-heading' }, 'What was checked'), '.');
      warn.hidden = false;
    } else {
      warn.hidden = true;
    }
    $('verify-details').replaceChildren(
      h('dl', { class: 'facts' }, rows.flatMap(([k, val]) => fact(k, val))),
      h('p', { class: 'help' }, 'Checked in this browser with WebCrypto. A verified report is the one this server signed, unchanged, and what this page shows is that report. The key comes from the same server, so this does not vouch for the server itself: for that, compare the key with a copy you keep, or verify the downloaded JSON or PDF offline with ', h('code', {}, 'locrisk report verify'), ' (docs/verification.md).'));
  }

  // ---- files ----

  function files(doc, rawText) {
    $('download-json').addEventListener('click', () => {
      // The bytes as the server sent them, which verify offline as they are.
      LR.download(new Blob([rawText], { type: 'application/json' }), 'location-risk-' + doc.reportId + '.json');
      $('files-status').textContent = 'Saved location-risk-' + doc.reportId + '.json.';
    });
    const pdfBtn = $('download-pdf');
    if (LR.lacks('reports:pdf')) {
      pdfBtn.disabled = true;
      $('files-status').replaceChildren(LR.scopeNote('reports:pdf'));
    }
    pdfBtn.addEventListener('click', async () => {
      pdfBtn.disabled = true;
      $('files-status').textContent = 'Fetching the PDF…';
      try {
        const blob = await LR.api('GET', doc.summary.links.pdf, { as: 'blob', scope: 'reports:pdf' });
        LR.download(blob, 'location-risk-' + doc.reportId + '.pdf');
        $('files-status').textContent = 'Saved location-risk-' + doc.reportId + '.pdf.';
        pdfBtn.disabled = false;
      } catch (e) {
        LR.showError($('files-status'), e, 'reports:pdf');
        pdfBtn.disabled = LR.lacks('reports:pdf');
      }
    });
  }

  // ---- the page ----

  async function main() {
    const keysPromise = fetch('/.well-known/locrisk-signing-keys', { credentials: 'omit', cache: 'no-store' })
      .then((r) => { if (!r.ok) throw new Error('HTTP ' + r.status); return r.json(); });
    keysPromise.catch(() => {}); // reported by verify
    let got;
    try {
      got = await LR.api('GET', '/api/v1/location-risk/reports/' + encodeURIComponent(id) + '?detail=full', { as: 'raw', scope: 'reports:read' });
    } catch (e) {
      const box = $('report-loading');
      if (e instanceof LR.ApiError && e.code === 'report_not_found') {
        box.replaceChildren(h('span', { class: 'error' }, 'No report ' + id + ' for this key\'s account (it may be another account\'s, or past the retention period).'));
      } else {
        LR.showError(box, e, 'reports:read');
      }
      return;
    }
    const doc = got.data;
    render(doc);
    $('report-loading').hidden = true;
    $('report').hidden = false;
    performance.mark('locrisk-report-shown');
    files(doc, got.text);
    await Promise.all([
      drawMaps(doc.location),
      verify(doc, keysPromise).then(showVerification, (e) => showVerification({ state: 'unchecked', reason: 'the check itself failed: ' + e.message, checks: [] })),
    ]);
    performance.mark('locrisk-report-verified');
  }
  main();
})();
