// The series overview: one row per series on this instance, sortable by the
// one-step error, the coverage, the outliers or the last update. It follows
// the list's event stream (GET /v1/events/series), which sends the page in
// the chosen order whenever the daemon published a change.
import { isoTime } from './svgplot.js';

const LIMIT = 500;
const $ = (s) => document.querySelector(s);
let sort = 'id', order = 'asc', es = null, page = null;

const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? Number(v.toPrecision(4)).toString() : '—');

function ago(iso) {
  const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  if (s < 60) return s.toFixed(0) + ' s ago';
  if (s < 3600) return (s / 60).toFixed(0) + ' min ago';
  return (s / 3600).toFixed(1) + ' h ago';
}

function render() {
  if (!page) return;
  const shown = page.series.length;
  $('#count').textContent = page.total === shown
    ? `${page.total} series on this instance`
    : `${page.total} series on this instance; the first ${shown} by ${sort} (${order}) are shown`;
  const body = $('#series tbody');
  body.replaceChildren();
  for (const s of page.series) {
    const tr = body.insertRow();
    tr.dataset.series = s.id;
    const cell = (text, cls) => { const td = tr.insertCell(); td.textContent = text; if (cls) td.className = cls; return td; };
    const a = document.createElement('a');
    a.href = 'series.html?id=' + encodeURIComponent(s.id);
    a.textContent = s.id;
    tr.insertCell().append(a);
    cell(`${s.topic}/${s.partition}`);
    cell(s.time ? isoTime(s.last_t) : String(s.last_t), 'num');
    cell(ago(s.updated), 'num');
    cell(s.fitted ? 'fitted' : 'warm-up');
    cell(String(s.predicted), 'num');
    cell(s.predicted ? num(s.one_step_rmse) : '—', 'num');
    const c = s.coverage95;
    cell(s.predicted ? (100 * c).toFixed(1) + ' %' : '—', 'num ' + (!s.predicted ? '' : c >= 0.93 ? 'good' : c >= 0.88 ? 'warn' : 'bad'));
    cell(String(s.outliers), 'num');
    cell(s.fitted ? String(s.model.m) : '—', 'num');
    cell(s.fitted ? (s.model.lags || []).join(', ') : '—');
    cell(s.bytes.toLocaleString('en'), 'num');
  }
  for (const th of document.querySelectorAll('th[data-sort]')) {
    th.classList.toggle('sorted-asc', th.dataset.sort === sort && order === 'asc');
    th.classList.toggle('sorted-desc', th.dataset.sort === sort && order === 'desc');
  }
}

function connect() {
  if (es) es.close();
  es = new EventSource(`../v1/events/series?sort=${sort}&order=${order}&limit=${LIMIT}`);
  es.addEventListener('series', (e) => { page = JSON.parse(e.data); render(); });
  es.onopen = () => { $('#live').textContent = 'live'; $('#live').className = 'live on'; };
  const mine = es;
  es.onerror = () => {
    $('#live').textContent = 'reconnecting…'; $('#live').className = 'live off';
    // A browser retries a dropped stream by itself, but not one answered
    // with an error (a proxy's 502 while the daemon restarts): start anew,
    // unless a click has replaced the stream meanwhile.
    if (mine.readyState === EventSource.CLOSED) setTimeout(() => { if (es === mine) connect(); }, 3000);
  };
}

for (const th of document.querySelectorAll('th[data-sort]')) {
  th.addEventListener('click', () => {
    if (sort === th.dataset.sort) order = order === 'asc' ? 'desc' : 'asc';
    else { sort = th.dataset.sort; order = th.dataset.first; }
    connect();
  });
}
setInterval(render, 5000); // keeps "updated … ago" current between events
connect();
