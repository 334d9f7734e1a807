// The sign-in page: the key is checked against the API before it is kept,
// and the read operations the pages use are asked once, so that the pages
// can hide what the key's scopes do not allow (docs/console.md, Signing in).
'use strict';

(() => {
  const form = document.getElementById('signin-form');
  const input = document.getElementById('key');
  const error = document.getElementById('key-error');
  const status = document.getElementById('signin-status');
  const submit = document.getElementById('signin-submit');

  // The reads the pages make, one per read scope. Each is a GET that
  // changes nothing; a key without the scope gets 403.
  const probes = [
    ['reports:read', '/api/v1/location-risk/report-jobs?limit=1'],
    ['bulk:read', '/api/v1/location-risk/batches?limit=1'],
    ['usage:read', '/api/v1/usage/current'],
    ['webhooks:read', '/api/v1/webhooks?limit=1'],
  ];

  // next is where to go after signing in: a page of the console only.
  function next() {
    const n = new URLSearchParams(location.search).get('next') || '';
    return /^\/console\/[A-Za-z0-9_\-/.?=&%]*$/.test(n) && !n.startsWith('/console/signin') && !n.includes('..') ? n : '/console/';
  }

  function fail(msg) {
    error.textContent = msg;
    error.hidden = false;
    input.setAttribute('aria-invalid', 'true');
    input.focus();
  }

  if (LR.key()) {
    status.replaceChildren(LR.h('p', {}, 'This tab is signed in with ' + LR.keyHint() + '. ',
      LR.h('a', { href: next() }, 'Continue'), ', or paste another key to use it instead.'));
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    error.hidden = true;
    input.removeAttribute('aria-invalid');
    const k = input.value.trim();
    if (!/^lrk_[0-9A-Za-z]{20,}$/.test(k)) {
      fail('An API key starts with lrk_ followed by letters and digits; check that it was pasted whole.');
      return;
    }
    submit.disabled = true;
    status.textContent = 'Checking the key…';
    try {
      const answers = await Promise.all(probes.map(async ([scope, path]) => {
        const res = await fetch(path, { headers: { Authorization: 'Bearer ' + k }, cache: 'no-store', credentials: 'omit', redirect: 'error' });
        return [scope, res.status, res.headers.get('Retry-After')];
      }));
      if (answers.some(([, st]) => st === 401)) {
        status.textContent = '';
        fail('The server refused this key (401 invalid_api_key): it is unknown, expired or revoked, its account is disabled, or it is not allowed from this address.');
        return;
      }
      const limited = answers.find(([, st]) => st === 429);
      if (limited) {
        status.textContent = '';
        fail('The server is limiting this account\'s requests (429); try again in ' + (limited[2] || 'a few') + ' s.');
        return;
      }
      LR.signOut();
      LR.setKey(k);
      for (const [scope, st] of answers) {
        if (st === 200) LR.noteScope(scope, true);
        if (st === 403) LR.noteScope(scope, false);
      }
      input.value = '';
      const missing = answers.filter(([, st]) => st === 403).map(([s]) => s);
      LR.flash(missing.length
        ? 'Signed in. This key lacks ' + missing.join(', ') + ': the pages say where that matters.'
        : 'Signed in.');
      location.assign(next());
    } catch (e) {
      status.textContent = '';
      fail('The server could not be reached (' + e.message + ').');
    } finally {
      submit.disabled = false;
    }
  });

  input.focus();
})();
