// The portfolio page: a CSV file read in the browser becomes one batch
// (docs/api.md, Batches), and the account's recent batches are listed
// (docs/console.md, Portfolios).
'use strict';

(() => {
  if (!LR.ready) return;
  const { h } = LR;
  const $ = (x) => document.getElementById(x);
  const maxItems = 100; // the API's limit for one batch

  // parseCSV reads RFC 4180 text (quotes, doubled quotes, CRLF or LF, a
  // byte order mark) into rows of fields; blank lines are skipped. A
  // stray quote is an error naming its line.
  function parseCSV(text) {
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    const rows = [];
    let row = [];
    let field = '';
    let quoted = false;
    let line = 1;
    let i = 0;
    const endRow = () => {
      row.push(field);
      if (!(row.length === 1 && row[0] === '')) rows.push({ line, fields: row });
      row = [];
      field = '';
    };
    while (i < text.length) {
      const c = text[i];
      if (quoted) {
        if (c === '"') {
          if (text[i + 1] === '"') { field += '"'; i += 2; continue; }
          quoted = false;
          i++;
          if (i < text.length && text[i] !== ',' && text[i] !== '\n' && text[i] !== '\r') {
            throw new Error('line ' + line + ': a quote closes in the middle of a field');
          }
          continue;
        }
        if (c === '\n') line++;
        field += c;
        i++;
        continue;
      }
      if (c === '"') {
        if (field !== '') throw new Error('line ' + line + ': a stray quote inside a field');
        quoted = true;
        i++;
      } else if (c === ',') {
        row.push(field);
        field = '';
        i++;
      } else if (c === '\r' || c === '\n') {
        endRow();
        if (c === '\r' && text[i + 1] === '\n') i++;
        i++;
        line++;
      } else {
        field += c;
        i++;
      }
    }
    if (quoted) throw new Error('line ' + line + ': a quoted field is not closed');
    if (field !== '' || row.length) endRow();
    return rows;
  }

  // coordinate is a cell as the batch takes it: a JSON number when it is a
  // plain decimal, else the text as it is, which the API then rejects
  // with the row's reason (so the rule lives in one place, the server).
  function coordinate(cell) {
    const s = cell.trim();
    if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return Number(s);
    return s === '' ? null : s;
  }

  function itemsOf(text) {
    const rows = parseCSV(text);
    if (!rows.length) throw new Error('the file is empty');
    const header = rows[0].fields.map((f) => f.trim().toLowerCase());
    const col = (name) => header.indexOf(name.toLowerCase());
    const lat = col('latitude');
    const lon = col('longitude');
    const ext = col('externalId');
    if (lat < 0 || lon < 0) {
      throw new Error('the header row needs the columns latitude and longitude (and may have externalId); it has ' + rows[0].fields.join(', '));
    }
    for (const name of ['latitude', 'longitude', 'externalid']) {
      if (header.indexOf(name) !== header.lastIndexOf(name)) throw new Error('the header has the column ' + name + ' twice');
    }
    const data = rows.slice(1);
    if (!data.length) throw new Error('the file has a header row but no data rows');
    if (data.length > maxItems) {
      throw new Error('the file has ' + data.length + ' rows; one batch takes at most ' + maxItems + '. Split it into files of ' + maxItems + ' rows, or score it with locrisk score.');
    }
    return data.map((r) => {
      if (r.fields.length !== rows[0].fields.length) {
        throw new Error('line ' + r.line + ' has ' + r.fields.length + ' fields where the header has ' + rows[0].fields.length);
      }
      const item = { latitude: coordinate(r.fields[lat]), longitude: coordinate(r.fields[lon]) };
      if (ext >= 0 && r.fields[ext] !== '') item.externalId = r.fields[ext];
      return item;
    });
  }

  const form = $('upload-form');
  const error = $('upload-error');
  const status = $('upload-status');
  const button = $('upload');
  function fail(msg) {
    error.textContent = msg;
    error.hidden = !msg;
  }
  if (LR.lacks('bulk:create')) {
    form.append(LR.scopeNote('bulk:create'));
    button.disabled = true;
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    fail('');
    const file = $('csv').files[0];
    if (!file) {
      fail('Choose a CSV file first.');
      $('csv').focus();
      return;
    }
    let items;
    try {
      items = itemsOf(await file.text());
    } catch (e) {
      fail('The file cannot be uploaded: ' + e.message + '.');
      $('csv').focus();
      return;
    }
    const body = { items };
    const name = $('batch-name').value.trim() || file.name;
    if (name) body.name = name.slice(0, 200);
    button.disabled = true;
    status.textContent = 'Uploading ' + items.length + ' rows…';
    try {
      const batch = await LR.api('POST', '/api/v1/location-risk/batches', { json: body, scope: 'bulk:create', idempotencyKey: LR.newKey() });
      location.assign('/console/batches/' + encodeURIComponent(batch.batchId));
    } catch (e) {
      status.textContent = '';
      if (e instanceof LR.ApiError && e.code === 'insufficient_scope') status.replaceChildren(LR.scopeNote('bulk:create'));
      else fail(LR.explain(e));
      button.disabled = LR.lacks('bulk:create');
    }
  });

  async function batches() {
    const box = $('batches');
    if (LR.lacks('bulk:read')) {
      box.replaceChildren(LR.scopeNote('bulk:read'));
      return;
    }
    try {
      const list = await LR.api('GET', '/api/v1/location-risk/batches?limit=20', { scope: 'bulk:read' });
      if (!list.batches.length) {
        box.replaceChildren(h('p', { class: 'muted' }, 'No batches yet.'));
        return;
      }
      box.replaceChildren(LR.table('Recent batches', ['Name', 'Created', 'Status', 'Progress', 'Items'],
        list.batches.map((b) => h('tr', {},
          h('td', {}, h('a', { href: '/console/batches/' + encodeURIComponent(b.batchId) }, b.name || b.batchId)),
          h('td', {}, LR.time(b.createdUtc)),
          h('td', {}, LR.statusTag(b.status)),
          h('td', {}, b.progressPercent + '%'),
          h('td', {}, b.totalItems)))));
    } catch (e) {
      LR.showError(box, e, 'bulk:read');
    }
  }
  batches();

  // The account's watchlists (operation 23) and, for the list chosen, its
  // items (operation 28); a changed item shows what changed against its
  // previous report (operation 21).
  async function watchlists() {
    const box = $('watchlists');
    if (LR.lacks('watchlists:read')) {
      box.replaceChildren(LR.scopeNote('watchlists:read'));
      return;
    }
    try {
      const list = await LR.api('GET', '/api/v1/location-risk/watchlists?limit=20', { scope: 'watchlists:read' });
      if (!list.watchlists.length) {
        box.replaceChildren(h('p', { class: 'muted' }, 'No watchlists yet.'));
        return;
      }
      box.replaceChildren(LR.table('Watchlists', ['Name', 'Created', 'Items', 'Changed', 'Score change that counts'],
        list.watchlists.map((w) => h('tr', {},
          h('td', {}, h('button', { type: 'button', class: 'link', 'data-watchlist': w.watchlistId, onclick: () => items(w) }, w.name || w.watchlistId)),
          h('td', {}, LR.time(w.createdUtc)),
          h('td', {}, w.itemCount),
          h('td', {}, w.changedCount),
          h('td', {}, w.minScoreChange + ' points')))));
    } catch (e) {
      LR.showError(box, e, 'watchlists:read');
    }
  }

  async function items(w) {
    const box = $('watch-items');
    box.replaceChildren(h('p', { class: 'muted' }, 'Loading the items of ', w.name || w.watchlistId, '…'));
    try {
      const res = await LR.api('GET', '/api/v1/location-risk/watchlists/' + encodeURIComponent(w.watchlistId) + '/items?limit=100', { scope: 'watchlists:read' });
      const rows = res.items.map((it) => h('tr', {},
        h('td', {}, it.externalId || it.itemId),
        h('td', {}, LR.coord(it.latitude, it.longitude)),
        h('td', {}, it.reportId ? h('a', { href: '/console/reports/' + encodeURIComponent(it.reportId) }, String(it.score)) : h('span', { class: 'muted' }, it.status || 'waiting')),
        h('td', {}, it.riskLevel ? LR.levelTag(it.riskLevel) : '–'),
        h('td', { 'data-changes': it.itemId }, it.changed ? 'Changed ' + (it.lastChangedUtc ? LR.time(it.lastChangedUtc) : '') : 'No')));
      box.replaceChildren(h('h3', {}, w.name || w.watchlistId), LR.table('Watchlist items', ['Item', 'Coordinate', 'Score', 'Level', 'Changed'], rows));
      for (const it of res.items) {
        if (it.changed && it.previousReportId && it.reportId) changes(it);
      }
    } catch (e) {
      LR.showError(box, e, 'watchlists:read');
    }
  }

  // changes lists an item's material module changes under its Changed cell.
  async function changes(it) {
    const cell = document.querySelector('[data-changes="' + it.itemId + '"]');
    try {
      const c = await LR.api('GET', '/api/v1/location-risk/reports/' + encodeURIComponent(it.reportId) + '/changes?since=' + encodeURIComponent(it.previousReportId), { scope: 'reports:read' });
      const material = c.changes.filter((m) => m.material);
      if (cell && material.length) {
        cell.append(h('ul', { class: 'changes' }, material.map((m) => h('li', {},
          LR.moduleWords(m.module), ': ', m.scoreBefore === null ? 'no data' : String(m.scoreBefore), ' → ', m.scoreAfter === null ? 'no data' : String(m.scoreAfter),
          ' (', LR.levelWords(m.riskLevelBefore), ' → ', LR.levelWords(m.riskLevelAfter), ')'))));
      }
    } catch (e) {
      if (cell) cell.append(h('p', { class: 'muted' }, LR.explain(e)));
    }
  }
  watchlists();
})();
