// The portfolio page: a CSV file read in the browser becomes one batch
// (docs/api.md, Batches), the account's recent batches are listed, and
// its watchlists with their items and what changed (docs/api.md,
// Watchlists; docs/console.md, Portfolios).
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

  // ---- watchlists (docs/api.md, Watchlists) ----

  const wlBox = $('watchlists');
  const itemsSection = $('watchlist-items');
  const itemsBox = $('wl-items');
  const api = '/api/v1/location-risk/';

  function levelCell(score, level) {
    return score === null || score === undefined ? h('span', { class: 'muted' }, 'no score yet') : [h('strong', {}, score), ' ', LR.levelTag(level)];
  }

  // changeList is what operation 21 says changed between an item's
  // previous and current report: each module's score and level, before
  // and after; null (no data) is written as such, never as 0.
  function changeList(ch) {
    if (!ch.changes.length) return h('span', { class: 'muted' }, 'No module\'s score or level differs.');
    const score = (v) => (v === null || v === undefined ? 'no data' : String(v));
    return h('ul', { class: 'changes' }, ch.changes.map((c) => h('li', { 'data-module': c.module },
      h('strong', {}, LR.moduleWords(c.module)), ': ', score(c.scoreBefore), ' → ', score(c.scoreAfter), ', ',
      LR.levelWords(c.riskLevelBefore), ' → ', LR.levelWords(c.riskLevelAfter),
      c.material ? h('span', { class: 'muted' }, ' (material)') : null)));
  }

  async function changesOf(it) {
    try {
      const ch = await LR.api('GET', api + 'reports/' + encodeURIComponent(it.reportId) + '/changes?since=' + encodeURIComponent(it.previousReportId), { scope: 'reports:read' });
      return changeList(ch);
    } catch (e) {
      const box = h('div');
      LR.showError(box, e, 'reports:read');
      return box;
    }
  }

  async function showItems(wl) {
    itemsSection.hidden = false;
    $('wl-items-heading').textContent = 'Items of ' + (wl.name || wl.watchlistId);
    itemsBox.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
    let list;
    try {
      list = await LR.api('GET', wl.itemsUrl + '?limit=100', { scope: 'watchlists:read' });
    } catch (e) {
      LR.showError(itemsBox, e, 'watchlists:read');
      return;
    }
    if (!list.items.length) {
      itemsBox.replaceChildren(h('p', { class: 'muted' }, 'This watchlist has no items.'));
      return;
    }
    // What changed, for the changed items that have a previous report.
    const changes = await Promise.all(list.items.map((it) => (it.changed && it.previousReportId && it.reportId ? changesOf(it) : null)));
    const rows = list.items.map((it, i) => h('tr', { 'data-item': it.itemId, 'data-changed': it.changed ? 'true' : 'false', class: it.error ? 'row-error' : null },
      h('td', {}, it.externalId || h('span', { class: 'muted' }, 'none')),
      h('td', { class: 'nowrap' }, LR.coord(it.latitude, it.longitude)),
      h('td', {}, LR.statusTag(it.status)),
      h('td', {}, levelCell(it.score, it.riskLevel)),
      h('td', {}, it.changed ? h('strong', {}, 'Changed') : 'No'),
      h('td', {}, LR.time(it.lastChangedUtc)),
      h('td', {}, changes[i] || (it.changed ? h('span', { class: 'muted' }, 'no previous report to compare') : '–')),
      h('td', {}, it.reportId ? h('a', { href: '/console/reports/' + encodeURIComponent(it.reportId) }, 'Report') : '–',
        it.error ? h('div', { class: 'error' }, h('code', {}, it.error.code), ' ', it.error.message) : null)));
    const table = LR.table('Items of ' + (wl.name || wl.watchlistId),
      ['Label', 'Coordinate', 'Status', 'Score', 'Changed', 'Last changed', 'Changes', 'Report'], rows);
    if (list.nextCursor) {
      itemsBox.replaceChildren(table, h('p', { class: 'help' }, 'The 100 newest items are shown; ', h('code', {}, 'locrisk watchlists items'), ' or the API lists the rest.'));
    } else {
      itemsBox.replaceChildren(table);
    }
  }

  async function watchlists(open) {
    if (LR.lacks('watchlists:read')) {
      wlBox.replaceChildren(LR.scopeNote('watchlists:read'));
      return;
    }
    let list;
    try {
      list = await LR.api('GET', api + 'watchlists?limit=100', { scope: 'watchlists:read' });
    } catch (e) {
      LR.showError(wlBox, e, 'watchlists:read');
      return;
    }
    $('add-watchlist').hidden = LR.lacks('watchlists:write');
    if (!list.watchlists.length) {
      wlBox.replaceChildren(h('p', { class: 'muted' }, 'No watchlists yet.'));
      return;
    }
    wlBox.replaceChildren(LR.table('Watchlists', ['Name', 'Items', 'Changed', 'Created', ''],
      list.watchlists.map((wl) => h('tr', { 'data-watchlist': wl.watchlistId },
        h('td', {}, wl.name || h('code', {}, wl.watchlistId)),
        h('td', {}, wl.itemCount),
        h('td', {}, wl.changedCount ? h('strong', {}, wl.changedCount) : '0'),
        h('td', {}, LR.time(wl.createdUtc)),
        h('td', { class: 'actions' }, h('button', {
          type: 'button', class: 'show-items', 'aria-controls': 'watchlist-items',
          onclick: () => showItems(wl).then(() => $('wl-items-heading').focus()),
        }, 'Show items', h('span', { class: 'visually-hidden' }, ' of ' + (wl.name || wl.watchlistId))))))));
    const chosen = open && list.watchlists.find((wl) => wl.watchlistId === open);
    if (chosen) showItems(chosen);
  }
  watchlists();

  // Creating one: a name and a CSV file read as a batch's is.
  const wlForm = $('watchlist-form');
  const wlError = $('wl-error');
  const wlButton = $('wl-create');
  wlForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    wlError.hidden = true;
    const file = $('wl-csv').files[0];
    let items;
    try {
      if (!file) throw new Error('choose a CSV file first');
      items = itemsOf(await file.text());
    } catch (e) {
      wlError.textContent = 'The file cannot be used: ' + e.message + '.';
      wlError.hidden = false;
      $('wl-csv').focus();
      return;
    }
    const body = { items };
    const name = $('wl-name').value.trim() || file.name;
    if (name) body.name = name.slice(0, 200);
    wlButton.disabled = true;
    $('wl-status').textContent = 'Creating the watchlist with ' + items.length + ' items…';
    try {
      const got = await LR.api('POST', api + 'watchlists', { json: body, scope: 'watchlists:write' });
      $('wl-status').textContent = 'Created with ' + got.items.length + ' items' +
        (got.rejected.length ? '; ' + got.rejected.length + ' rows refused: ' + got.rejected.map((r) => 'row ' + r.rowNumber + ' ' + r.error.code).join(', ') : '') + '.';
      await watchlists(got.watchlist.watchlistId);
    } catch (e) {
      $('wl-status').textContent = '';
      LR.showError($('wl-status'), e, 'watchlists:write');
    }
    wlButton.disabled = LR.lacks('watchlists:write');
  });
})();
