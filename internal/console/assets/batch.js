// The batch page: progress, counts and items of one batch, read again
// every second while it is processing, and its results CSV
// (docs/console.md, Portfolios).
'use strict';

(() => {
  if (!LR.ready) return;
  const { h } = LR;
  const $ = (x) => document.getElementById(x);
  const id = document.getElementById('main').dataset.id;
  const base = '/api/v1/location-risk/batches/' + encodeURIComponent(id);

  function showBatch(b) {
    const title = b.name || b.batchId;
    $('batch-title').textContent = title;
    document.title = title + ' · batch · locrisk console';
    $('progress').value = b.progressPercent;
    const final = b.counts.completed + b.counts.failed + b.counts.rejected;
    $('progress-text').textContent = (b.status === 'completed' ? 'Completed: ' : 'Processing: ') +
      final + ' of ' + b.totalItems + ' items final (' + b.progressPercent + '%)' +
      (b.completedUtc ? ', at ' + LR.time(b.completedUtc) : '') + '.';
    $('counts').replaceChildren(...['queued', 'processing', 'completed', 'failed', 'rejected'].map((k) =>
      h('div', {}, h('dt', {}, LR.statusTag(k)), h('dd', {}, b.counts[k]))));
  }

  function showItems(items) {
    $('items').replaceChildren(LR.table('Batch items', ['Row', 'External id', 'Coordinate', 'Status', 'Score', 'Error'],
      items.map((it) => h('tr', { class: it.error ? 'row-error' : null },
        h('td', {}, it.rowNumber),
        h('td', {}, it.externalId === null ? h('span', { class: 'muted' }, '–') : it.externalId),
        h('td', { class: 'nowrap' }, it.latitude === null || it.longitude === null ? h('span', { class: 'muted' }, '–') : LR.coord(it.latitude, it.longitude)),
        h('td', {}, LR.statusTag(it.status)),
        h('td', { class: 'nowrap' }, it.reportId
          ? [h('a', { href: '/console/reports/' + encodeURIComponent(it.reportId), 'aria-label': 'Report of row ' + it.rowNumber + ': score ' + it.score }, String(it.score)), ' ', LR.levelTag(it.riskLevel)]
          : '–'),
        h('td', {}, it.error ? [h('span', { class: 'error' }, it.error.message), ' ', h('code', { class: 'muted' }, it.error.code)] : '–')))));
  }

  async function poll() {
    if (LR.lacks('bulk:read')) {
      $('progress-text').replaceChildren(LR.scopeNote('bulk:read'));
      return;
    }
    for (;;) {
      let b;
      try {
        const [batch, items] = await Promise.all([
          LR.api('GET', base, { scope: 'bulk:read' }),
          LR.api('GET', base + '/items', { scope: 'bulk:read' }),
        ]);
        b = batch;
        showBatch(batch);
        showItems(items.items);
      } catch (e) {
        if (e instanceof LR.ApiError && e.code === 'batch_not_found') {
          $('progress-text').replaceChildren(h('span', { class: 'error' }, 'No batch ' + id + ' for this key\'s account.'));
        } else {
          LR.showError($('progress-text'), e, 'bulk:read');
        }
        return;
      }
      if (b.status === 'completed') return;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }

  $('download-csv').addEventListener('click', async () => {
    const btn = $('download-csv');
    btn.disabled = true;
    $('csv-status').textContent = 'Fetching the CSV…';
    try {
      const blob = await LR.api('GET', base + '/results.csv', { as: 'blob', scope: 'bulk:read' });
      LR.download(blob, 'batch-' + id + '.csv');
      $('csv-status').textContent = 'Saved batch-' + id + '.csv.';
    } catch (e) {
      LR.showError($('csv-status'), e, 'bulk:read');
    } finally {
      btn.disabled = false;
    }
  });

  poll();
})();
