// The operations page: usage against the quota with a daily chart, the
// operations summary, webhook endpoints and their deliveries
// (docs/console.md, Operations).
'use strict';

(() => {
  if (!LR.ready) return;
  const { h, svg } = LR;
  const $ = (x) => document.getElementById(x);

  // ---- usage ----

  async function usage() {
    const box = $('usage');
    if (LR.lacks('usage:read')) {
      box.replaceChildren(LR.scopeNote('usage:read'));
      return;
    }
    try {
      const u = await LR.api('GET', '/api/v1/usage/current', { scope: 'usage:read' });
      const jobs = u.quotas.find((q) => q.name === 'report_jobs');
      const rpm = u.quotas.find((q) => q.name === 'requests_per_minute');
      const parts = [];
      if (jobs) {
        const pct = jobs.limit > 0 ? Math.min(100, Math.round(jobs.used * 100 / jobs.limit)) : 100;
        const bar = h('span', { class: 'bar quota-bar', 'aria-hidden': 'true' }, h('span', { class: 'bar-fill' }));
        bar.firstChild.style.width = pct + '%';
        parts.push(h('p', { class: 'quota' }, h('strong', {}, LR.num(jobs.used, 0)), ' of ', LR.num(jobs.limit, 0),
          ' report jobs used this month (', pct, '%); ', LR.num(jobs.remaining, 0), ' left, until ', LR.time(jobs.resetsAtUtc), '.'), bar);
      }
      if (rpm) {
        parts.push(h('p', {}, 'Requests this minute: ', LR.num(rpm.used, 0), ' of ', LR.num(rpm.limit, 0), ' per minute.'));
      }
      const j = u.apiReportJobs;
      parts.push(h('dl', { class: 'counts' },
        ['created', 'queued', 'processing', 'completed', 'failed'].map((k) => h('div', {}, h('dt', {}, k === 'created' ? 'Created' : LR.statusTag(k)), h('dd', {}, LR.num(j[k], 0))))));
      box.replaceChildren(...parts);
    } catch (e) {
      LR.showError(box, e, 'usage:read');
    }
  }

  // ---- history chart ----

  const buckets = [['api', 'Single jobs (API)'], ['bulk', 'Batch and watchlist items'], ['manual', 'Command line']];

  async function history() {
    const box = $('history');
    if (LR.lacks('usage:read')) {
      box.replaceChildren(LR.scopeNote('usage:read'));
      return;
    }
    try {
      const hist = await LR.api('GET', '/api/v1/usage/history?days=30', { scope: 'usage:read' });
      const days = [];
      const byDay = new Map();
      for (const it of hist.items) {
        if (!byDay.has(it.dateUtc)) {
          const d = { date: it.dateUtc, api: 0, bulk: 0, manual: 0, completed: 0, failed: 0 };
          byDay.set(it.dateUtc, d);
          days.push(d);
        }
        const d = byDay.get(it.dateUtc);
        d[it.bucket] = it.reportJobs;
        d.completed += it.completed;
        d.failed += it.failed;
      }
      box.replaceChildren(chart(days, box.clientWidth), legend(), dataTable(days));
    } catch (e) {
      LR.showError(box, e, 'usage:read');
    }
  }

  // chart draws the days as stacked bars, in a drawing as wide as the
  // space it gets, so its labels keep their size on a phone.
  function chart(days, width) {
    const W = Math.max(300, Math.min(900, Math.round(width || 720))), H = 220, left = 40, bottom = 24, top = 10;
    const max = Math.max(1, ...days.map((d) => d.api + d.bulk + d.manual));
    const step = niceStep(max);
    const ymax = Math.ceil(max / step) * step;
    const bw = (W - left - 10) / Math.max(1, days.length);
    const y = (v) => top + (H - top - bottom) * (1 - v / ymax);
    const grid = [];
    for (let v = 0; v <= ymax; v += step) {
      grid.push(svg('line', { x1: left, x2: W - 5, y1: y(v), y2: y(v), class: 'grid' }),
        svg('text', { x: left - 6, y: y(v) + 4, class: 'axis', 'text-anchor': 'end' }, String(v)));
    }
    const bars = days.map((d, i) => {
      let acc = 0;
      const x = left + i * bw + bw * 0.15;
      const g = svg('g', {}, svg('title', {}, d.date + ': ' + buckets.map(([k, n]) => n.toLowerCase() + ' ' + d[k]).join(', ')));
      for (const [k] of buckets) {
        if (!d[k]) continue;
        g.append(svg('rect', { x: x.toFixed(1), width: (bw * 0.7).toFixed(1), y: y(acc + d[k]).toFixed(1), height: (y(acc) - y(acc + d[k])).toFixed(1), class: 'b-' + k }));
        acc += d[k];
      }
      return g;
    });
    const every = W < 500 ? 10 : 5;
    const labels = days.map((d, i) => (i % every === 0 || i === days.length - 1)
      ? svg('text', { x: (left + i * bw + bw / 2).toFixed(1), y: H - 6, class: 'axis', 'text-anchor': 'middle' }, d.date.slice(5))
      : null);
    const total = days.reduce((s, d) => s + d.api + d.bulk + d.manual, 0);
    return svg('svg', { viewBox: '0 0 ' + W + ' ' + H, class: 'chart', role: 'img', 'aria-label': 'Report jobs created per day over the last ' + days.length + ' days: ' + total + ' in all. The table below lists each day.' },
      grid, bars, labels);
  }

  function niceStep(max) {
    const raw = max / 4;
    const p = 10 ** Math.floor(Math.log10(raw));
    return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) || p * 10;
  }

  function legend() {
    return h('ul', { class: 'legend', 'aria-hidden': 'true' }, buckets.map(([k, n]) => h('li', {}, h('span', { class: 'swatch b-' + k }), n)));
  }

  function dataTable(days) {
    return h('details', {}, h('summary', {}, 'The same as a table'),
      LR.table('Report jobs per day', ['Day (UTC)', 'Single jobs', 'Batch items', 'Command line', 'Completed', 'Failed'],
        days.slice().reverse().map((d) => h('tr', {}, h('td', {}, d.date), h('td', {}, d.api), h('td', {}, d.bulk), h('td', {}, d.manual), h('td', {}, d.completed), h('td', {}, d.failed)))));
  }

  // ---- operations summary ----

  async function summary() {
    const box = $('summary');
    if (LR.lacks('usage:read')) {
      box.replaceChildren(LR.scopeNote('usage:read'));
      $('hours').closest('.field').hidden = true;
      return;
    }
    try {
      const s = await LR.api('GET', '/api/v1/observability/current?hours=' + encodeURIComponent($('hours').value), { scope: 'usage:read' });
      const ms = (v) => v === null || v === undefined ? 'none measured' : LR.num(v, 1) + ' ms';
      const group = (title, rows) => h('div', { class: 'stat-group' }, h('h3', {}, title),
        h('dl', { class: 'facts' }, rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])));
      const parts = [
        h('p', { class: 'muted' }, LR.time(s.windowStartUtc), ' to ', LR.time(s.windowEndUtc), '.'),
        h('div', { class: 'stats' },
          group('Requests', [['Total', LR.num(s.requests.total, 0)], ['Succeeded', LR.num(s.requests.succeeded, 0)],
            ['Client errors', LR.num(s.requests.clientErrors, 0)], ['Server errors', LR.num(s.requests.serverErrors, 0)],
            ['Rate limited', LR.num(s.requests.rateLimited, 0)], ['Latency p50 / p95', ms(s.requests.p50LatencyMs) + ' / ' + ms(s.requests.p95LatencyMs)]]),
          group('Report jobs', [['Created', LR.num(s.reportJobs.created, 0)], ['Completed', LR.num(s.reportJobs.completed, 0)],
            ['Failed', LR.num(s.reportJobs.failed, 0)], ['Queued now', LR.num(s.reportJobs.queued, 0)], ['Processing now', LR.num(s.reportJobs.processing, 0)],
            ['Completion p50 / p95', ms(s.reportJobs.p50CompletionMs) + ' / ' + ms(s.reportJobs.p95CompletionMs)]]),
          group('Batches', [['Created', LR.num(s.batches.created, 0)], ['Processing now', LR.num(s.batches.processing, 0)], ['Completed', LR.num(s.batches.completed, 0)]]),
          group('Webhooks', [['Deliveries', LR.num(s.webhooks.deliveries, 0)], ['Succeeded', LR.num(s.webhooks.succeeded, 0)],
            ['Failed', LR.num(s.webhooks.failed, 0)], ['Pending now', LR.num(s.webhooks.pending, 0)]])),
      ];
      parts.push(h('h3', {}, 'Recent failures'));
      parts.push(s.recentFailures.length
        ? LR.table('Recent failures', ['When', 'What', 'Id', 'Code', 'Message'], s.recentFailures.map((f) => h('tr', {},
          h('td', {}, LR.time(f.occurredUtc)), h('td', {}, f.kind === 'report_job' ? 'report job' : 'webhook delivery'),
          h('td', {}, h('code', {}, f.id)), h('td', {}, h('code', {}, f.code)), h('td', {}, f.message))))
        : h('p', { class: 'muted' }, 'None in this window.'));
      box.replaceChildren(...parts);
    } catch (e) {
      LR.showError(box, e, 'usage:read');
    }
  }
  $('hours').addEventListener('change', summary);

  // ---- webhooks ----

  let endpointNames = new Map();

  async function endpoints() {
    const box = $('endpoints');
    if (LR.lacks('webhooks:read')) {
      box.replaceChildren(LR.scopeNote('webhooks:read'));
      return;
    }
    try {
      const list = await LR.api('GET', '/api/v1/webhooks?limit=100', { scope: 'webhooks:read' });
      endpointNames = new Map(list.endpoints.map((e) => [e.id, e.name]));
      if (!list.endpoints.length) {
        box.replaceChildren(h('p', { class: 'muted' }, 'No endpoints yet.'));
        return;
      }
      box.replaceChildren(LR.table('Webhook endpoints', ['Name', 'URL', 'Events', 'State', 'Actions'],
        list.endpoints.map((e) => h('tr', { 'data-endpoint': e.id },
          h('td', {}, e.name, h('br'), h('code', { class: 'muted small' }, e.id)),
          h('td', { class: 'url' }, e.url),
          h('td', {}, e.events.join(', ')),
          h('td', {}, e.isActive ? h('span', { class: 'status st-succeeded' }, 'Active') : h('span', { class: 'status st-failed' }, 'Disabled ' + LR.time(e.disabledUtc))),
          h('td', { class: 'actions' }, e.isActive && !LR.lacks('webhooks:write') ? [
            h('button', { type: 'button', class: 'send-test', onclick: () => sendTest(e) }, 'Send a test event'),
            ' ',
            h('button', { type: 'button', class: 'danger', onclick: () => disable(e) }, 'Disable'),
          ] : '–')))));
    } catch (e) {
      LR.showError(box, e, 'webhooks:read');
    }
  }

  const epStatus = () => $('endpoint-status');

  // Without webhooks:write the endpoints can be read but not changed: the
  // form and the buttons give way to the note.
  function writable() {
    if (!LR.lacks('webhooks:write')) return true;
    const add = $('add-endpoint');
    if (add) add.replaceWith(LR.scopeNote('webhooks:write'));
    return false;
  }

  async function sendTest(e) {
    epStatus().textContent = 'Queueing a test event for ' + e.name + '…';
    try {
      const d = await LR.api('POST', '/api/v1/webhooks/' + encodeURIComponent(e.id) + '/test', { scope: 'webhooks:write' });
      epStatus().textContent = 'Test event queued for ' + e.name + ' (delivery ' + d.id + '); its attempts appear under Deliveries.';
      watchDeliveries();
    } catch (err) {
      LR.showError(epStatus(), err, 'webhooks:write');
      if (!writable()) endpoints();
    }
  }

  async function disable(e) {
    if (!window.confirm('Disable the endpoint ' + e.name + '? Nothing more is sent to it, and its pending deliveries fail. This cannot be undone.')) return;
    try {
      await LR.api('DELETE', '/api/v1/webhooks/' + encodeURIComponent(e.id), { as: 'none', scope: 'webhooks:write' });
      epStatus().textContent = 'Disabled ' + e.name + '.';
      endpoints();
      deliveries();
    } catch (err) {
      LR.showError(epStatus(), err, 'webhooks:write');
      if (!writable()) endpoints();
    }
  }

  $('endpoint-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const err = $('endpoint-error');
    err.hidden = true;
    const form = ev.target;
    const events = Array.from(form.querySelectorAll('input[name=events]:checked'), (c) => c.value);
    const body = { name: $('ep-name').value.trim(), url: $('ep-url').value.trim(), events };
    try {
      const created = await LR.api('POST', '/api/v1/webhooks', { json: body, scope: 'webhooks:write' });
      form.reset();
      $('add-endpoint').open = false;
      epStatus().replaceChildren(h('div', { class: 'secret' },
        h('p', {}, h('strong', {}, 'Endpoint ' + created.endpoint.name + ' added. '), 'Its signing secret, shown this once only; keep it where your receiver can read it:'),
        h('p', {}, h('code', { class: 'secret-value' }, created.signingSecret))));
      endpoints();
    } catch (e) {
      if (e instanceof LR.ApiError && e.code === 'insufficient_scope') {
        epStatus().replaceChildren();
        writable();
        endpoints();
      } else {
        err.textContent = LR.explain(e);
        err.hidden = false;
      }
    }
  });

  // ---- deliveries ----

  async function deliveries() {
    const box = $('deliveries');
    if (LR.lacks('webhooks:read')) {
      box.replaceChildren(LR.scopeNote('webhooks:read'));
      $('refresh-deliveries').hidden = true;
      return [];
    }
    try {
      const list = await LR.api('GET', '/api/v1/webhooks/deliveries?limit=50', { scope: 'webhooks:read' });
      if (!list.deliveries.length) {
        box.replaceChildren(h('p', { class: 'muted' }, 'No deliveries yet.'));
        return [];
      }
      box.replaceChildren(LR.table('Webhook deliveries', ['Created', 'Event', 'Endpoint', 'Status', 'Attempts', 'Last answer', 'Next attempt', ''],
        list.deliveries.map((d) => h('tr', { 'data-delivery': d.id, 'data-event': d.event, 'data-status': d.status },
          h('td', {}, LR.time(d.createdUtc)),
          h('td', {}, h('code', {}, d.event), d.jobId ? [h('br'), h('code', { class: 'muted small' }, d.jobId)] : null),
          h('td', {}, endpointNames.get(d.endpointId) || h('code', {}, d.endpointId)),
          h('td', {}, LR.statusTag(d.status), d.deliveredUtc ? h('span', { class: 'muted small' }, ' ' + LR.time(d.deliveredUtc)) : null),
          h('td', {}, d.attempts),
          h('td', {}, d.responseStatus ? 'HTTP ' + d.responseStatus : '–', d.error ? [h('br'), h('span', { class: 'error small' }, d.error)] : null),
          h('td', {}, d.status === 'pending' ? LR.time(d.nextAttemptUtc) : '–'),
          h('td', {}, d.status === 'failed' && !LR.lacks('webhooks:write')
            ? h('button', { type: 'button', onclick: () => redeliver(d) }, 'Redeliver')
            : null)))));
      return list.deliveries;
    } catch (e) {
      LR.showError(box, e, 'webhooks:read');
      return [];
    }
  }

  async function redeliver(d) {
    try {
      await LR.api('POST', '/api/v1/webhooks/deliveries/' + encodeURIComponent(d.id) + '/redeliver', { scope: 'webhooks:write' });
      epStatus().textContent = 'Delivery ' + d.id + ' queued again.';
      watchDeliveries();
    } catch (err) {
      LR.showError(epStatus(), err, 'webhooks:write');
      if (!writable()) deliveries();
    }
  }

  // watchDeliveries reads the deliveries every second while any is
  // pending, for at most a minute after an action.
  let watching = 0;
  async function watchDeliveries() {
    const mine = ++watching;
    const until = Date.now() + 60000;
    for (;;) {
      const list = await deliveries();
      if (mine !== watching) return;
      if (!list.some((d) => d.status === 'pending') || Date.now() > until) {
        summary();
        return;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  $('refresh-deliveries').addEventListener('click', () => { deliveries(); summary(); });

  writable();
  usage();
  history();
  summary();
  endpoints().then(watchDeliveries);
})();
