// The page of one series: its recent observations with their one-step
// predictions and flagged outliers, the latest forecast as a fan chart, the
// one-step errors, the running coverage, the scores and the model. It
// redraws from the series' event stream (GET /v1/events/series/{id}), which
// sends the series' view whenever the daemon published a change.
import { chart, isoTime } from './svgplot.js';

const id = new URLSearchParams(location.search).get('id') || '';
const $ = (s) => document.querySelector(s);
const BLUE = '#1f5fae', INK = '#1d2430', RED = '#c0392b', GREEN = '#2f855a', GREY = '#8795a8';
let view = null;
let updates = 0;

document.title = `streamd · ${id}`;
$('#series-id').textContent = id;

const num = (v, digits = 4) => (typeof v === 'number' && Number.isFinite(v) ? Number(v.toPrecision(digits)).toString() : '—');
// partner names the theta partner of a model (messages.md, model.theta):
// an autoregression by its order, else the smoothing by its weight α and,
// where it was measured, its band's growth.
const partner = (th) => {
  if (th.ar && th.ar.length) return `theta: AR(${th.ar.length})`;
  const growth = th.growth === undefined ? '' : `, band growth ${num(th.growth, 3)}`;
  return `theta: α ${num(th.alpha, 3)}${growth}`;
};
const pct = (v) => (typeof v === 'number' && Number.isFinite(v) ? (100 * v).toFixed(1) + ' %' : '—');

function rows(table, pairs) {
  table.replaceChildren();
  for (const [k, v, cls] of pairs) {
    const tr = table.insertRow();
    const th = document.createElement('th');
    th.textContent = k;
    tr.append(th);
    const td = tr.insertCell();
    td.textContent = v;
    if (cls) td.className = cls;
  }
}

function coverageClass(c, n) {
  if (!n) return '';
  return c >= 0.93 ? 'good' : c >= 0.88 ? 'warn' : 'bad';
}

function render() {
  const v = view;
  if (!v) {
    $('#status').textContent = 'This series is not on this instance (not seen yet, evicted, or its partition moved to another instance).';
    for (const c of ['#main-chart', '#error-chart', '#coverage-chart', '#scores', '#model', '#forecast']) $(c).replaceChildren();
    $('#main-title').textContent = 'Observations and forecast';
    return;
  }
  // t: UTC times in Unix ms when the series' records carry times, else
  // sequence numbers.
  const T = (t) => (v.time ? isoTime(t) : String(t));
  const tLabel = v.time ? 't (UTC)' : 't';
  updates++;
  document.body.dataset.updates = updates;
  const h = v.history, fan = v.fan, latest = v.latest;
  const levels = v.levels.map((l) => Math.round(100 * l) + ' %');
  const fitted = v.fitted ? `fitted, ${v.predicted} values predicted`
    : fan.length > 0 ? 'in warm-up: the theta method forecasts alone until the model is fitted' : 'in warm-up: no forecast yet';
  $('#status').textContent = `${fitted} · last t ${T(v.last_t)} · updated ${new Date(v.updated).toLocaleTimeString()}`;

  // Main chart: the last observations, enough of them to read the series'
  // dynamics next to the forecast without squashing it (at least 100, four
  // horizons). The fan starts at the observation the forecast was issued
  // after, so that it visibly continues the series.
  const keep = Math.max(100, 4 * fan.length);
  const from = Math.max(0, h.t.length - keep);
  const cut = (a) => a.slice(from);
  const mt = cut(h.t), my = cut(h.y), mp = cut(h.prediction), mo = cut(h.outlier);
  $('#main-title').textContent = fan.length
    ? `Last ${mt.length} observations and the forecast ${fan.length} steps ahead`
    : `Last ${mt.length} observations`;
  const layers = [];
  let issue = null, anchor = null;
  if (fan.length) {
    issue = latest.t;
    const at = h.t.lastIndexOf(issue);
    anchor = at >= 0 ? h.y[at] : fan[0].mean;
    const ft = [issue, ...fan.map((s) => s.t)];
    const shades = [0.42, 0.26, 0.14]; // inner band darkest
    for (let i = v.levels.length - 1; i >= 0; i--) {
      layers.push({ kind: 'band', id: `fan-${Math.round(100 * v.levels[i])}`, x: ft,
        lo: [anchor, ...fan.map((s) => s.lo[i])], hi: [anchor, ...fan.map((s) => s.hi[i])],
        color: BLUE, opacity: shades[i] ?? 0.14, label: `${levels[i]} band` });
    }
  }
  layers.push({ kind: 'line', id: 'observed', x: mt, y: my, color: INK, width: 1.4, label: 'observed' });
  layers.push({ kind: 'line', id: 'one-step', x: mt, y: mp, color: GREEN, width: 1.2, dash: '4 3', label: 'one-step prediction' });
  const ox = [], oy = [];
  mt.forEach((t, i) => { if (mo[i]) { ox.push(t); oy.push(my[i]); } });
  layers.push({ kind: 'points', id: 'outliers', x: ox, y: oy, color: RED, r: 4.5, hollow: true, label: `outlier (${v.outliers} since the start)` });
  if (fan.length) {
    layers.push({ kind: 'line', id: 'fan-mean-drawn', x: [issue, ...fan.map((s) => s.t)],
      y: [anchor, ...fan.map((s) => s.mean)], color: BLUE, width: 2, label: 'forecast mean' });
    // The forecast's own points, as the server sent them.
    layers.push({ kind: 'points', id: 'fan-mean', x: fan.map((s) => s.t), y: fan.map((s) => s.mean), color: BLUE, r: 2,
      data: { t: JSON.stringify(fan.map((s) => s.t)), mean: JSON.stringify(fan.map((s) => s.mean)), issued: issue } });
    layers.push({ kind: 'vline', id: 'issued', x: issue, color: GREY, dash: '3 3', label: `forecast issued at t = ${T(issue)}` });
  }
  chart($('#main-chart'), { layers, xLabel: tLabel, xTime: v.time, yLabel: 'y', height: 340 });

  const std95 = h.std.map((s) => (s == null ? null : 1.959963984540054 * s));
  const eo = [], ey = [];
  h.t.forEach((t, i) => { if (h.outlier[i] && h.error[i] != null) { eo.push(t); ey.push(h.error[i]); } });
  chart($('#error-chart'), {
    xLabel: tLabel, xTime: v.time, yLabel: 'y − prediction', height: 230, layers: [
      { kind: 'band', x: h.t, lo: std95.map((s) => (s == null ? null : -s)), hi: std95, color: GREY, opacity: 0.25, label: '±95 % one-step band' },
      { kind: 'hline', y: 0, color: GREY },
      { kind: 'line', id: 'errors', x: h.t, y: h.error, color: INK, width: 1.2, label: 'one-step error' },
      { kind: 'points', x: eo, y: ey, color: RED, r: 4.5, hollow: true, label: 'outlier' },
    ],
  });
  chart($('#coverage-chart'), {
    xLabel: tLabel, xTime: v.time, yLabel: 'share inside the band', height: 230, yDomain: [0, 1.02],
    yFormat: (y) => Math.round(100 * y) + ' %', layers: [
      { kind: 'hline', y: 0.95, color: RED, dash: '5 4', label: 'nominal 95 %' },
      { kind: 'line', id: 'coverage', x: h.t, y: h.coverage, color: GREEN, width: 1.6, label: 'last 50 predictions' },
    ],
  });

  rows($('#scores'), [
    ['predicted values', String(v.predicted)],
    ['one-step RMSE', num(v.one_step_rmse)],
    ['95 % coverage', v.predicted ? pct(v.coverage95) : '—', coverageClass(v.coverage95, v.predicted)],
    ['outliers', String(v.outliers)],
    ['last t', T(v.last_t)],
    ['topic / partition', `${v.topic} / ${v.partition}`],
    ['state bytes', v.bytes.toLocaleString('en')],
  ]);
  const m = v.model || {};
  rows($('#model'), v.fitted ? [
    ['working set M', String(m.m)],
    ['lags of y', (m.lags || []).join(', ')],
    ...(m.input_lags ? [['lags of the inputs', m.input_lags.map((l, i) => `u${i}: ${l ? l.join(', ') : 'none yet'}`).join('; ')]] : []),
    ['kernel', m.kernel || '—'],
    ['form', m.form || '—'],
    ['combined with', m.theta ? `${partner(m.theta)}, period ${m.theta.period || 'none'}` : 'none'],
    ['kernel width σ²', m.sigma2 ? num(m.sigma2) : '— (not RBF)'],
    ['regularisation γ', num(m.gamma)],
    ['noise std', num(m.noise_std)],
    ['effective parameters', num(m.d_eff, 3)],
    ['working-set swaps', String(m.swaps)],
  ] : [
    ['state', 'warm-up: the model is fitted after the first values'],
    ['forecast by', m.theta ? `${partner(m.theta)} alone, period ${m.theta.period || 'none'}` : 'none yet'],
  ]);

  const ft = $('#forecast');
  ft.replaceChildren();
  const head = ft.createTHead().insertRow();
  for (const c of ['h', 't', 'mean', ...levels.map((l) => l + ' interval')]) {
    const th = document.createElement('th');
    th.textContent = c;
    if (c !== 'h' && c !== 't') th.className = 'num';
    head.append(th);
  }
  const body = ft.createTBody();
  for (const s of fan) {
    const tr = body.insertRow();
    const cells = [String(s.h), T(s.t), num(s.mean, 5), ...s.lo.map((lo, i) => `${num(lo, 4)} … ${num(s.hi[i], 4)}`)];
    cells.forEach((c, i) => { const td = tr.insertCell(); td.textContent = c; if (i >= 2) td.className = 'num'; });
  }
}

function connect() {
  const es = new EventSource(`../v1/events/series/${encodeURIComponent(id)}`);
  es.addEventListener('view', (e) => { view = JSON.parse(e.data); render(); });
  es.onopen = () => { $('#live').textContent = 'live'; $('#live').className = 'live on'; };
  es.onerror = () => {
    $('#live').textContent = 'reconnecting…'; $('#live').className = 'live off';
    // A browser retries a dropped stream by itself, but not one answered
    // with an error (a proxy's 502 while the daemon restarts): start anew.
    if (es.readyState === EventSource.CLOSED) setTimeout(connect, 3000);
  };
}

let resize;
new ResizeObserver(() => { clearTimeout(resize); resize = setTimeout(() => view && render(), 150); }).observe($('main'));
connect();
