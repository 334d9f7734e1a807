// The address page: a coordinate typed or picked on the map becomes a
// report job, which the page follows until it is final and then opens
// its report (docs/console.md, One address).
'use strict';

(() => {
  if (!LR.ready) return;
  const { h } = LR;
  const deg = Math.PI / 180;

  // ---- the map: each panel's Albers projection (usmap.go) ----

  const svgEl = document.getElementById('usmap');
  const marker = document.getElementById('marker');
  const pick = document.getElementById('map-pick');
  const latIn = document.getElementById('lat');
  const lonIn = document.getElementById('lon');

  function normLon(l) {
    l = ((l + 180) % 360 + 360) % 360 - 180;
    return l;
  }

  const panels = Array.from(svgEl.querySelectorAll('g[data-panel]')).map((g) => {
    const [lat1, lat2, lat0, lon0, k, tx, ty] = g.dataset.albers.split(' ').map(Number);
    const [bx, by, bw, bh] = g.dataset.box.split(' ').map(Number);
    const [minLon, minLat, maxLon, maxLat] = g.dataset.bounds.split(' ').map(Number);
    const s1 = Math.sin(lat1 * deg);
    const n = (s1 + Math.sin(lat2 * deg)) / 2;
    const c = Math.cos(lat1 * deg) ** 2 + 2 * n * s1;
    const rho0 = Math.sqrt(c - 2 * n * Math.sin(lat0 * deg)) / n;
    return {
      name: g.dataset.panel, lon0, k, tx, ty, n, c, rho0,
      box: { x: bx, y: by, w: bw, h: bh }, bounds: { minLon, minLat, maxLon, maxLat },
    };
  });
  // Insets are drawn after the conterminous states, over their box: they
  // are asked first.
  const byPriority = panels.slice().reverse();

  function toMap(p, lat, lon) {
    const rho = Math.sqrt(p.c - 2 * p.n * Math.sin(lat * deg)) / p.n;
    const theta = p.n * normLon(lon - p.lon0) * deg;
    const x = rho * Math.sin(theta);
    const y = p.rho0 - rho * Math.cos(theta);
    return { x: p.tx + p.k * x, y: p.ty - p.k * y };
  }

  function fromMap(p, X, Y) {
    const x = (X - p.tx) / p.k;
    const y = (p.ty - Y) / p.k;
    const dy = p.rho0 - y;
    const rho = Math.sign(p.n) * Math.sqrt(x * x + dy * dy);
    const theta = Math.atan2(Math.sign(p.n) * x, Math.sign(p.n) * dy);
    const s = (p.c - rho * rho * p.n * p.n) / (2 * p.n);
    if (s < -1 || s > 1) return null;
    return { lat: Math.asin(s) / deg, lon: normLon(p.lon0 + theta / p.n / deg) };
  }

  function panelAtMap(X, Y) {
    return byPriority.find((p) => X >= p.box.x && X <= p.box.x + p.box.w && Y >= p.box.y && Y <= p.box.y + p.box.h);
  }
  function panelOfCoord(lat, lon) {
    return byPriority.find((p) => {
      const b = p.bounds;
      const l = p.lon0 + normLon(lon - p.lon0);
      return lat >= b.minLat && lat <= b.maxLat && l >= b.minLon && l <= b.maxLon;
    });
  }

  function showMarker(lat, lon) {
    const p = panelOfCoord(lat, lon);
    if (!p) {
      marker.setAttribute('hidden', '');
      return;
    }
    const { x, y } = toMap(p, lat, lon);
    marker.setAttribute('transform', 'translate(' + x.toFixed(1) + ' ' + y.toFixed(1) + ')');
    marker.removeAttribute('hidden');
  }

  svgEl.addEventListener('click', (ev) => {
    const m = svgEl.getScreenCTM();
    if (!m) return;
    const pt = new DOMPoint(ev.clientX, ev.clientY).matrixTransform(m.inverse());
    const p = panelAtMap(pt.x, pt.y);
    const c = p && fromMap(p, pt.x, pt.y);
    if (!c) return;
    const lat = Math.round(c.lat * 1e4) / 1e4;
    const lon = Math.round(c.lon * 1e4) / 1e4;
    latIn.value = String(lat);
    lonIn.value = String(lon);
    showMarker(lat, lon);
    const state = ev.target.closest && ev.target.closest('path.state');
    const name = state ? state.querySelector('title').textContent : '';
    pick.textContent = 'Picked ' + LR.coord(lat, lon) + (name ? ', in ' + name : '') + '. Press “Create report” to assess it.';
  });

  function typed() {
    const lat = parseNumber(latIn.value);
    const lon = parseNumber(lonIn.value);
    if (lat !== null && lon !== null) showMarker(lat, lon);
    else marker.setAttribute('hidden', '');
  }
  latIn.addEventListener('input', typed);
  lonIn.addEventListener('input', typed);

  // parseNumber reads a plain decimal number ("-90.07", "4.1e1"), null
  // for anything else.
  function parseNumber(s) {
    s = String(s).trim().replace('\u2212', '-');
    if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return null;
    const v = Number(s);
    return Number.isFinite(v) ? v : null;
  }

  // ---- creating and following a job ----

  const form = document.getElementById('coord-form');
  const coordError = document.getElementById('coord-error');
  const jobStatus = document.getElementById('job-status');
  const createBtn = document.getElementById('create');

  function fieldError(msg) {
    coordError.textContent = msg;
    coordError.hidden = !msg;
    for (const el of [latIn, lonIn]) {
      if (msg) el.setAttribute('aria-invalid', 'true'); else el.removeAttribute('aria-invalid');
    }
  }

  if (LR.lacks('reports:create')) {
    form.append(LR.scopeNote('reports:create'));
    createBtn.disabled = true;
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    fieldError('');
    const lat = parseNumber(latIn.value);
    const lon = parseNumber(lonIn.value);
    if (lat === null || lat < -90 || lat > 90) {
      fieldError('Latitude must be a number from -90 to 90, such as 29.9511.');
      latIn.focus();
      return;
    }
    if (lon === null || lon < -180 || lon > 180) {
      fieldError('Longitude must be a number from -180 to 180, such as -90.0715 (west is negative).');
      lonIn.focus();
      return;
    }
    createBtn.disabled = true;
    jobStatus.replaceChildren(h('p', {}, 'Creating the report job…'));
    try {
      const job = await LR.api('POST', '/api/v1/location-risk/report-jobs',
        { json: { latitude: lat, longitude: lon }, scope: 'reports:create', idempotencyKey: LR.newKey() });
      await follow(job);
    } catch (e) {
      jobStatus.replaceChildren();
      if (e instanceof LR.ApiError && e.code === 'insufficient_scope') {
        jobStatus.replaceChildren(LR.scopeNote('reports:create'));
      } else if (e instanceof LR.ApiError && e.status >= 400 && e.status < 500 && e.code !== 'quota_exceeded' && e.code !== 'rate_limit_exceeded') {
        fieldError(LR.explain(e));
      } else {
        LR.showError(jobStatus, e);
      }
    } finally {
      createBtn.disabled = LR.lacks('reports:create');
    }
  });

  // follow polls the job until it is final. It asks often at first (a
  // report usually takes well under a second) so that the report opens
  // as soon as it is ready, then at the pace the API suggests.
  async function follow(job) {
    const started = performance.now();
    for (;;) {
      jobStatus.replaceChildren(h('p', {}, 'Job ', h('code', {}, job.jobId), ': ', LR.statusTag(job.status),
        job.status === 'queued' && job.attempts > 0 ? ' (retrying after attempt ' + job.attempts + ')' : '', '…'));
      if (job.status === 'completed') {
        jobStatus.replaceChildren(h('p', {}, 'Completed; opening the report…'));
        location.assign('/console/reports/' + encodeURIComponent(job.result.reportId));
        return;
      }
      if (job.status === 'failed') {
        showFailed(job);
        return;
      }
      const elapsed = performance.now() - started;
      const wait = elapsed < 3000 ? 100 : elapsed < 15000 ? 500 : Math.max(1, job.pollAfterSeconds || 1) * 1000;
      await new Promise((r) => setTimeout(r, wait));
      job = await LR.api('GET', '/api/v1/location-risk/report-jobs/' + encodeURIComponent(job.jobId), { scope: 'reports:read' });
    }
  }

  function showFailed(job) {
    const err = job.error || {};
    const parts = [h('p', { class: 'error' }, 'The job failed: ', err.message || 'no reason given', ' (', err.code || 'unknown', ').')];
    if (err.transient) {
      const retry = h('button', { type: 'button' }, 'Retry the job');
      retry.addEventListener('click', async () => {
        retry.disabled = true;
        try {
          const j = await LR.api('POST', '/api/v1/location-risk/report-jobs/' + encodeURIComponent(job.jobId) + '/retry', { scope: 'reports:create' });
          await follow(j);
        } catch (e) {
          LR.showError(jobStatus, e, 'reports:create');
        }
      });
      parts.push(h('p', {}, 'The failure is transient: retrying uses no quota. ', retry));
    }
    jobStatus.replaceChildren(...parts);
  }

  // ---- recent jobs ----

  async function recent() {
    const box = document.getElementById('recent');
    if (LR.lacks('reports:read')) {
      box.replaceChildren(LR.scopeNote('reports:read'));
      return;
    }
    try {
      const list = await LR.api('GET', '/api/v1/location-risk/report-jobs?limit=10', { scope: 'reports:read' });
      if (!list.jobs.length) {
        box.replaceChildren(h('p', { class: 'muted' }, 'No report jobs yet.'));
        return;
      }
      box.replaceChildren(LR.table('Recent report jobs', ['Created', 'Coordinate', 'Status', 'Report'],
        list.jobs.map((j) => h('tr', {},
          h('td', {}, LR.time(j.createdUtc)),
          h('td', {}, LR.coord(j.latitude, j.longitude)),
          h('td', {}, LR.statusTag(j.status), j.batchId ? h('span', { class: 'muted' }, ' (batch)') : null),
          h('td', {}, j.result
            ? h('a', { href: '/console/reports/' + encodeURIComponent(j.result.reportId) }, 'Open the report')
            : j.error ? h('span', { class: 'muted' }, j.error.code) : '–')))));
    } catch (e) {
      LR.showError(box, e, 'reports:read');
    }
  }
  recent();
})();
