// What every page of the console shares (docs/console.md): the API key
// kept in this tab's sessionStorage, requests to the API with it, what a
// key's scopes allow, building DOM nodes, and the words for levels and
// times. Plain JavaScript, no build step; the pages' own scripts use LR.
'use strict';

const LR = (() => {
  const KEY = 'locrisk.apiKey';
  const SCOPES = 'locrisk.scopes';
  const FLASH = 'locrisk.flash';
  const store = window.sessionStorage;

  // ---- the key ----

  function key() {
    try { return store.getItem(KEY); } catch { return null; }
  }
  function setKey(k) { store.setItem(KEY, k); }
  function signOut() {
    store.removeItem(KEY);
    store.removeItem(SCOPES);
  }
  // keyHint names the key without showing it: its last four characters.
  function keyHint() {
    const k = key();
    return k ? 'key …' + k.slice(-4) : '';
  }

  // A message for the next page (the sign-in page's reason, say); it
  // never holds the key.
  function flash(msg) { store.setItem(FLASH, msg); }
  function takeFlash() {
    const m = store.getItem(FLASH);
    store.removeItem(FLASH);
    return m;
  }

  function toSignIn(reason) {
    if (reason) flash(reason);
    const next = location.pathname + location.search;
    location.assign('/console/signin?next=' + encodeURIComponent(next));
  }

  // ---- scopes ----
  //
  // No API operation tells a key its scopes (docs/api.md, Authentication).
  // Sign-in asks the four read operations the pages use and notes which
  // answer 403; what a write needs is learned from its first answer.
  // Either way the note lives in this tab only.

  const scopeWords = {
    'reports:create': 'create report jobs',
    'reports:read': 'read report jobs and reports',
    'reports:pdf': 'download report PDFs',
    'bulk:create': 'upload batches',
    'bulk:read': 'read batches and their results',
    'usage:read': 'read usage and the operations summary',
    'webhooks:read': 'list webhook endpoints and deliveries',
    'webhooks:write': 'add, test and disable webhook endpoints, and redeliver',
    'watchlists:read': 'read watchlists and their items',
    'watchlists:write': 'change watchlists and re-score them',
  };

  function scopes() {
    try { return JSON.parse(store.getItem(SCOPES) || '{}'); } catch { return {}; }
  }
  function noteScope(scope, has) {
    const s = scopes();
    s[scope] = has ? 'yes' : 'no';
    store.setItem(SCOPES, JSON.stringify(s));
  }
  // lacks reports whether the key is known to lack scope.
  function lacks(scope) { return scopes()[scope] === 'no'; }

  // scopeNote explains, in the page, what a missing scope keeps from view.
  function scopeNote(scope) {
    return h('div', { class: 'scope-note', role: 'note' },
      h('p', {}, h('strong', {}, 'Not available with this key. '),
        'It lacks the ', h('code', {}, scope), ' scope, which is needed to ', scopeWords[scope] || scope, '.'),
      h('p', { class: 'help' }, 'An operator can make a key that has it (',
        h('code', {}, 'locrisk keys create --scopes'), ' naming ', h('code', {}, scope),
        '); then sign out and sign in with that key.'));
  }

  // ---- the API ----

  class ApiError extends Error {
    constructor(status, code, message, requestId, retryAfter) {
      super(message);
      this.status = status;
      this.code = code;
      this.requestId = requestId || '';
      this.retryAfter = retryAfter || '';
    }
  }

  // api calls the API with the tab's key. opts: json (a body), scope (the
  // scope the operation needs, noted from the answer), idempotencyKey,
  // as: 'json' (default), 'raw' ({text, data}), 'blob', 'none'.
  async function api(method, path, opts = {}) {
    const k = key();
    if (!k) {
      toSignIn();
      throw new ApiError(401, 'not_signed_in', 'Not signed in.');
    }
    const headers = { Authorization: 'Bearer ' + k };
    let body;
    if (opts.json !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(opts.json);
    }
    if (opts.idempotencyKey) headers['Idempotency-Key'] = opts.idempotencyKey;
    let res;
    try {
      res = await fetch(path, { method, headers, body, cache: 'no-store', credentials: 'omit', redirect: 'error' });
    } catch (e) {
      throw new ApiError(0, 'network_error', 'The server could not be reached (' + e.message + ').');
    }
    if (res.status === 401) {
      signOut();
      toSignIn('The server refused the key (401 invalid_api_key): it is unknown, expired or revoked, its account is disabled, or it is not allowed from this address. Sign in with another key.');
      throw new ApiError(401, 'invalid_api_key', 'The key was refused.');
    }
    if (res.ok) {
      if (opts.scope) noteScope(opts.scope, true);
      switch (opts.as) {
        case 'blob': return res.blob();
        case 'none': return null;
        case 'raw': {
          const text = await res.text();
          return { text, data: JSON.parse(text) };
        }
        default:
          return res.status === 204 ? null : res.json();
      }
    }
    let e = {};
    try { e = (await res.json()).error || {}; } catch { /* not the error shape */ }
    if (res.status === 403 && e.code === 'insufficient_scope' && opts.scope) noteScope(opts.scope, false);
    throw new ApiError(res.status, e.code || 'http_' + res.status, e.message || res.statusText, e.requestId, res.headers.get('Retry-After'));
  }

  // explain turns an error into a sentence for the page.
  function explain(err) {
    if (!(err instanceof ApiError)) return String(err && err.message || err);
    if (err.code === 'insufficient_scope') return 'This key lacks the scope this needs: ' + err.message + '.';
    let s = err.message;
    if (!/[.!?]$/.test(s)) s += '.';
    if (err.retryAfter) s += ' Try again in ' + err.retryAfter + ' s.';
    if (err.status) s += ' (' + err.status + ' ' + err.code + (err.requestId ? ', request ' + err.requestId : '') + ')';
    return s;
  }

  // showError puts an error, or a scope note for a 403, into container.
  function showError(container, err, scope) {
    if (err instanceof ApiError && err.code === 'insufficient_scope' && scope) {
      container.replaceChildren(scopeNote(scope));
    } else {
      container.replaceChildren(h('p', { class: 'error', role: 'alert' }, explain(err)));
    }
  }

  // ---- DOM ----

  // h builds an element: attrs are attributes (class, aria-*, data-*, ...)
  // or on<event> handlers; children are nodes, strings, arrays or null.
  function build(el, attrs, children) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    const add = (c) => {
      if (c === null || c === undefined || c === false) return;
      if (Array.isArray(c)) c.forEach(add);
      else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    };
    children.forEach(add);
    return el;
  }
  function h(tag, attrs, ...children) { return build(document.createElement(tag), attrs, children); }
  function svg(tag, attrs, ...children) {
    return build(document.createElementNS('http://www.w3.org/2000/svg', tag), attrs, children);
  }

  // table builds an accessible table inside a scrollable region. Each
  // cell carries its column's name, which narrow screens show beside it
  // when the rows are stacked (console.css).
  function table(label, columns, rows) {
    for (const tr of rows) {
      Array.from(tr.children).forEach((td, i) => { if (columns[i]) td.dataset.label = columns[i]; });
    }
    return h('div', { class: 'table-wrap', role: 'region', 'aria-label': label, tabindex: 0 },
      h('table', {},
        h('caption', { class: 'visually-hidden' }, label),
        h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, rows)));
  }

  // download saves a blob as a file.
  function download(blob, filename) {
    const url = URL.createObjectURL(blob);
    const a = h('a', { href: url, download: filename, hidden: true });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
  }

  // ---- words ----

  const levels = {
    very_low: 'Very low', low: 'Low', moderate: 'Moderate', high: 'High', very_high: 'Very high',
  };
  function levelWords(l) { return levels[l] || (l ? String(l) : 'No data'); }
  // levelTag is a level in words, with a mark whose colour repeats it.
  function levelTag(level) {
    return h('span', { class: 'level lvl-' + (levels[level] ? level : 'none') }, levelWords(level));
  }

  const modules = {
    hydrology: 'Hydrology',
    severeWeather: 'Severe weather',
    wildfire: 'Wildfire',
    earthquake: 'Earthquake',
    landslide: 'Landslide',
    environmentalExposure: 'Environmental exposure',
  };
  function moduleWords(m) { return modules[m] || m; }

  const statuses = {
    queued: 'Queued', processing: 'Processing', completed: 'Completed', failed: 'Failed',
    rejected: 'Rejected', pending: 'Pending', succeeded: 'Succeeded',
  };
  function statusTag(s) {
    return h('span', { class: 'status st-' + s }, statuses[s] || s);
  }

  // time writes a UTC time of the API as "2026-11-22 10:00 UTC".
  function time(utc) {
    if (!utc) return '–';
    return String(utc).replace('T', ' ').replace(/:\d\dZ$/, '').replace(/Z$/, '') + ' UTC';
  }
  function num(v, digits) {
    if (v === null || v === undefined) return '–';
    return Number(v).toLocaleString('en-US', { maximumFractionDigits: digits === undefined ? 4 : digits });
  }
  function coord(lat, lon) {
    return num(lat, 5) + ', ' + num(lon, 5);
  }

  // newKey is an Idempotency-Key for one submission of a form.
  function newKey() {
    if (crypto.randomUUID) return 'console-' + crypto.randomUUID();
    const b = crypto.getRandomValues(new Uint8Array(16));
    return 'console-' + Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  }

  // ---- the page frame ----

  function init() {
    const page = document.body.dataset.page;
    const signedIn = !!key();
    if (page !== 'signin' && page !== 'notfound' && !signedIn) {
      toSignIn();
      return false;
    }
    const who = document.getElementById('who');
    if (who && signedIn) {
      document.getElementById('who-key').textContent = 'Signed in with ' + keyHint();
      who.hidden = false;
      document.getElementById('signout').addEventListener('click', () => {
        signOut();
        flash('Signed out: the key is no longer kept in this tab.');
        location.assign('/console/signin');
      });
    }
    const msg = takeFlash();
    const notice = document.getElementById('notice');
    if (msg && notice) {
      notice.textContent = msg;
      notice.hidden = false;
    }
    return true;
  }

  const ready = init();

  return {
    ready, key, setKey, signOut, keyHint, flash, toSignIn, scopes, noteScope, lacks, scopeNote, scopeWords,
    ApiError, api, explain, showError, h, svg, table, download,
    levelWords, levelTag, moduleWords, statusTag, time, num, coord, newKey,
    moduleOrder: Object.keys(modules),
  };
})();
