// svgplot: small SVG charts for the streamd web view. A chart is a list of
// layers drawn in order on linear axes with labelled ticks and grid lines:
//   {kind: 'band',   x, lo, hi, color, opacity, label}  filled between lo and hi
//   {kind: 'line',   x, y, color, width, dash, label, data} a polyline
//   {kind: 'points', x, y, color, r, hollow, label}      markers
//   {kind: 'vline',  x, color, dash, label}              a vertical rule
//   {kind: 'hline',  y, color, dash, label}              a horizontal rule
// null (or NaN) in x, y, lo or hi breaks a line or band. A layer's id and
// data (an object of data-* attributes) are put on its SVG element, for
// tests and tools. The legend is HTML above the plot, so it never covers
// the data.

const NS = 'http://www.w3.org/2000/svg';

function el(name, attrs, parent) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null) e.setAttribute(k, v);
  }
  if (parent) parent.appendChild(e);
  return e;
}

const finite = (v) => typeof v === 'number' && Number.isFinite(v);

// ticks returns about count round values (1, 2 or 5 × 10^k apart) covering
// [lo, hi], and their spacing. A spacing below the floats' resolution at lo
// (a span of a few units at 1e16) gives lo alone: adding it would not move.
export function ticks(lo, hi, count) {
  const raw = (hi - lo) / Math.max(count, 1);
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const f = raw / mag;
  const step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
  const first = Math.ceil(lo / step) * step;
  if (!(step > 0) || !Number.isFinite(first) || first + step === first) return { values: [lo], step: step > 0 ? step : 1 };
  const out = [];
  for (let v = first; v <= hi + step * 1e-9 && out.length <= 4 * count + 4; v += step) {
    out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  }
  return { values: out, step };
}

const SEC = 1000, MIN = 60 * SEC, HOUR = 60 * MIN, DAY = 24 * HOUR;
const TIME_STEPS = [SEC, 2 * SEC, 5 * SEC, 10 * SEC, 15 * SEC, 30 * SEC, MIN, 2 * MIN, 5 * MIN, 10 * MIN, 15 * MIN,
  30 * MIN, HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY];
const MONTH_STEPS = [1, 2, 3, 6, 12, 24, 60, 120, 240, 600, 1200];

// MAX_DATE is the largest |t| (Unix ms) a Date holds; the daemon takes t up
// to 2^53, which a page writes as the number.
const MAX_DATE = 8.64e15;

// isoTime writes the UTC time t (Unix ms) in ISO 8601, to the second.
export function isoTime(t) {
  return Math.abs(t) <= MAX_DATE ? new Date(t).toISOString().replace('.000Z', 'Z') : String(t);
}

// timeLabel writes the UTC time v (Unix ms) to the unit of its axis.
export function timeLabel(v, unit) {
  if (Math.abs(v) > MAX_DATE) return String(v);
  const s = new Date(v).toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  switch (unit) {
    case 'year': return s.slice(0, 4);
    case 'month': return s.slice(0, 7);
    case 'day': return s.slice(0, 10);
    case 'min': return s.slice(5, 10) + ' ' + s.slice(11, 16);
    default: return s.slice(11, 19);
  }
}

// timeTicks returns about count round UTC times (Unix ms) covering [lo, hi]:
// seconds to fortnights apart, or whole months and years, with the label
// of each.
export function timeTicks(lo, hi, count) {
  const raw = (hi - lo) / Math.max(count, 1);
  const step = TIME_STEPS.find((s) => s >= raw);
  const out = [];
  if (step !== undefined) {
    for (let v = Math.ceil(lo / step) * step; v <= hi && out.length <= 4 * count + 4; v += step) out.push(v);
    const unit = step < MIN ? 'sec' : step < DAY ? 'min' : 'day';
    return { values: out, label: (v) => timeLabel(v, unit) };
  }
  const long = MONTH_STEPS[MONTH_STEPS.length - 1];
  const months = MONTH_STEPS.find((m) => m * 30.44 * DAY >= raw) ?? long * Math.ceil(raw / (long * 30.44 * DAY));
  const d = new Date(lo);
  let idx = d.getUTCFullYear() * 12 + d.getUTCMonth();
  if (Date.UTC(Math.floor(idx / 12), idx % 12, 1) < lo) idx++;
  idx = Math.ceil(idx / months) * months;
  for (; out.length <= 4 * count + 4; idx += months) {
    const v = Date.UTC(Math.floor(idx / 12), idx % 12, 1);
    if (!(v <= hi)) break;
    out.push(v);
  }
  return { values: out, label: (v) => timeLabel(v, months >= 12 ? 'year' : 'month') };
}

// format writes v with the decimals its tick spacing needs.
export function format(v, step) {
  const d = Math.max(0, Math.min(10, -Math.floor(Math.log10(step) + 1e-9)));
  if (Math.abs(v) >= 1e7 && step >= 1) return v.toExponential(3).replace(/\.?0+e/, 'e');
  return v.toFixed(d);
}

function extent(layers, axis) {
  let lo = Infinity, hi = -Infinity;
  const see = (v) => { if (finite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); } };
  for (const l of layers) {
    if (axis === 'x') {
      if (l.kind === 'vline') see(l.x);
      else if (l.x) l.x.forEach(see);
    } else if (l.kind === 'band') { l.lo.forEach(see); l.hi.forEach(see); }
    else if (l.kind === 'hline') see(l.y);
    else if (l.y && l.kind !== 'vline') l.y.forEach(see);
  }
  if (lo === Infinity) return [0, 1];
  if (lo === hi) { const pad = Math.max(1, Math.abs(lo) * 1e-6); return [lo - pad, hi + pad]; }
  return [lo, hi];
}

// runs splits indices 0..n−1 into runs where ok(i) holds.
function runs(n, ok) {
  const out = [];
  let cur = [];
  for (let i = 0; i < n; i++) {
    if (ok(i)) cur.push(i);
    else if (cur.length) { out.push(cur); cur = []; }
  }
  if (cur.length) out.push(cur);
  return out;
}

const r2 = (v) => Math.round(v * 100) / 100;

function swatch(l) {
  const s = el('svg', { viewBox: '0 0 22 12' });
  if (l.kind === 'band') {
    el('rect', { x: 1, y: 1, width: 20, height: 10, fill: l.color, 'fill-opacity': l.opacity ?? 0.3 }, s);
  } else if (l.kind === 'points') {
    el('circle', { cx: 11, cy: 6, r: Math.min(l.r ?? 3, 5), fill: l.hollow ? 'none' : l.color, stroke: l.color, 'stroke-width': 1.5 }, s);
  } else {
    el('line', { x1: 1, y1: 6, x2: 21, y2: 6, stroke: l.color, 'stroke-width': l.width ?? 1.5, 'stroke-dasharray': l.dash }, s);
  }
  return s;
}

// chart draws spec into container (replacing what it held). spec: layers,
// xLabel, yLabel, height (px), optional yDomain [lo, hi], xDomain, yFormat
// (a function of a tick value), xTime (x holds UTC times in Unix ms).
export function chart(container, spec) {
  container.replaceChildren();
  const legend = document.createElement('div');
  legend.className = 'legend';
  for (const l of spec.layers) {
    if (!l.label) continue;
    const item = document.createElement('span');
    item.append(swatch(l), document.createTextNode(l.label));
    legend.append(item);
  }
  container.append(legend);

  const W = Math.max(container.clientWidth, 320), H = spec.height || 300;
  const m = { left: 64, right: 16, top: 8, bottom: 42 };
  const pw = W - m.left - m.right, ph = H - m.top - m.bottom;
  const svg = el('svg', { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': spec.yLabel + ' against ' + spec.xLabel }, container);

  let [x0, x1] = spec.xDomain || extent(spec.layers, 'x');
  let [y0, y1] = spec.yDomain || extent(spec.layers, 'y');
  if (!spec.yDomain) { const pad = (y1 - y0) * 0.06; y0 -= pad; y1 += pad; }
  const X = (v) => m.left + (v - x0) / (x1 - x0) * pw;
  const Y = (v) => m.top + (1 - (v - y0) / (y1 - y0)) * ph;

  const axes = el('g', { class: 'axis' }, svg);
  const yt = ticks(y0, y1, Math.max(3, Math.round(ph / 50)));
  for (const v of yt.values) {
    el('line', { class: 'gridline', x1: m.left, x2: m.left + pw, y1: r2(Y(v)), y2: r2(Y(v)) }, axes);
    const t = el('text', { x: m.left - 6, y: r2(Y(v)) + 4, 'text-anchor': 'end' }, axes);
    t.textContent = spec.yFormat ? spec.yFormat(v) : format(v, yt.step);
  }
  const xn = Math.max(3, Math.round(pw / 110));
  const xt = spec.xTime ? timeTicks(x0, x1, xn) : ticks(x0, x1, xn);
  for (const v of xt.values) {
    el('line', { class: 'gridline', x1: r2(X(v)), x2: r2(X(v)), y1: m.top, y2: m.top + ph }, axes);
    const t = el('text', { x: r2(X(v)), y: m.top + ph + 16, 'text-anchor': 'middle' }, axes);
    t.textContent = spec.xTime ? xt.label(v) : format(v, xt.step);
  }
  el('rect', { class: 'frame', x: m.left, y: m.top, width: pw, height: ph }, axes);
  const xl = el('text', { class: 'axis-label', x: m.left + pw / 2, y: H - 6, 'text-anchor': 'middle' }, axes);
  xl.textContent = spec.xLabel;
  const yl = el('text', { class: 'axis-label', transform: `translate(14 ${m.top + ph / 2}) rotate(-90)`, 'text-anchor': 'middle' }, axes);
  yl.textContent = spec.yLabel;

  const clipId = 'clip-' + Math.random().toString(36).slice(2);
  el('rect', { x: m.left, y: m.top, width: pw, height: ph }, el('clipPath', { id: clipId }, svg));
  const plot = el('g', { 'clip-path': `url(#${clipId})` }, svg);

  for (const l of spec.layers) {
    const attrs = { id: l.id };
    for (const [k, v] of Object.entries(l.data || {})) attrs['data-' + k] = v;
    if (l.kind === 'band') {
      const g = el('g', attrs, plot);
      for (const run of runs(l.x.length, (i) => finite(l.x[i]) && finite(l.lo[i]) && finite(l.hi[i]))) {
        const up = run.map((i) => `${r2(X(l.x[i]))},${r2(Y(l.hi[i]))}`);
        const down = run.slice().reverse().map((i) => `${r2(X(l.x[i]))},${r2(Y(l.lo[i]))}`);
        el('polygon', { points: up.concat(down).join(' '), fill: l.color, 'fill-opacity': l.opacity ?? 0.3, stroke: 'none' }, g);
      }
    } else if (l.kind === 'line') {
      const d = runs(l.x.length, (i) => finite(l.x[i]) && finite(l.y[i]))
        .map((run) => 'M' + run.map((i) => `${r2(X(l.x[i]))},${r2(Y(l.y[i]))}`).join('L')).join('');
      el('path', { ...attrs, d, fill: 'none', stroke: l.color, 'stroke-width': l.width ?? 1.5,
        'stroke-dasharray': l.dash, 'stroke-linejoin': 'round', 'stroke-linecap': 'round' }, plot);
    } else if (l.kind === 'points') {
      const g = el('g', attrs, plot);
      for (let i = 0; i < l.x.length; i++) {
        if (!finite(l.x[i]) || !finite(l.y[i])) continue;
        el('circle', { cx: r2(X(l.x[i])), cy: r2(Y(l.y[i])), r: l.r ?? 3, fill: l.hollow ? 'none' : l.color,
          stroke: l.color, 'stroke-width': 1.5 }, g);
      }
    } else if (l.kind === 'vline' && finite(l.x)) {
      el('line', { ...attrs, x1: r2(X(l.x)), x2: r2(X(l.x)), y1: m.top, y2: m.top + ph, stroke: l.color,
        'stroke-dasharray': l.dash, 'stroke-width': l.width ?? 1 }, plot);
    } else if (l.kind === 'hline' && finite(l.y)) {
      el('line', { ...attrs, x1: m.left, x2: m.left + pw, y1: r2(Y(l.y)), y2: r2(Y(l.y)), stroke: l.color,
        'stroke-dasharray': l.dash, 'stroke-width': l.width ?? 1 }, plot);
    }
  }
  return svg;
}
