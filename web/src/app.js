// The page of embedscope-serve: a WebGL scatter of every row (regl-scatterplot) from
// GET /v1/projection, the labelled neighbours of POST /v1/explore, analogy and similarity
// panels, the state in the URL and CSV / JSON export. Bundled by esbuild (CMake) and embedded in
// the server binary; it fetches nothing but the server's own routes.
//
// Security (docs/reliability.md H7): every string that comes from the model (tokens, evidence)
// or the user is inserted with textContent / createTextNode, never as HTML.
//
// Test hooks: document.body.dataset.scatter is "drawn" once every row is drawn, and
// dataset.search is "done" (or "error") after each search; window.embedscope exposes the
// scatter, the coordinates and the timings (navigation -> drawn, search -> list shown).
import createScatterplot from 'regl-scatterplot';

const $ = (id) => document.getElementById(id);

const state = {
  model: '',
  models: [],
  projection: 'pca',
  tokens: null, // readable token of each row (GET /v1/vocab)
  coords: null, // Float32Array rows * 2
  rows: 0,
  explore: null, // last explore document
  selection: [],
  apiKey: sessionStorage.getItem('embedscope-api-key') || '',
};
const timings = { drawnMs: null, searchMs: null, vocabMs: null, projectionMs: null };
let scatter = null;
let pendingSelection = null; // ids to select once the scatter is drawn
let vocabReady = Promise.resolve(); // resolves once state.tokens is loaded

// ---- HTTP ----
class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function request(path, { method = 'GET', body, binary = false } = {}) {
  const headers = {};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (state.apiKey) headers.Authorization = `Bearer ${state.apiKey}`;
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status === 401) {
    $('auth').hidden = false;
    throw new HttpError(401, 'this server needs an API key');
  }
  if (!res.ok) {
    let msg = `${res.status}`;
    try {
      msg = (await res.json()).error.message;
    } catch (_) {
      /* not our JSON error */
    }
    throw new HttpError(res.status, msg);
  }
  if (binary) return res;
  return res.json();
}

const withModel = (o) => (state.model ? { ...o, model: state.model } : o);

function setStatus(text, isError = false) {
  const s = $('status');
  s.textContent = text;
  s.classList.toggle('error', isError);
}

// ---- DOM helpers (text only) ----
function cell(tr, text, cls) {
  const td = document.createElement('td');
  td.textContent = text;
  if (cls) td.className = cls;
  tr.appendChild(td);
  return td;
}

function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
}

const fmt = (x) => (x === null || x === undefined ? '' : Number(x).toFixed(4));
const tokenOf = (id) => (state.tokens && id < state.tokens.length ? state.tokens[id] : `#${id}`);

// ---- URL state ----
function writeUrl() {
  const p = new URLSearchParams();
  const q = $('q').value.trim();
  if (q) p.set('q', q);
  if (state.model && state.models.length > 1) p.set('model', state.model);
  if (state.projection !== 'pca') p.set('projection', state.projection);
  if (state.selection.length) p.set('sel', state.selection.slice(0, 200).join(','));
  const s = p.toString();
  history.replaceState(null, '', s ? `?${s}` : location.pathname);
}

function readUrl() {
  const p = new URLSearchParams(location.search);
  const sel = (p.get('sel') || '')
    .split(',')
    .filter((x) => /^\d+$/.test(x))
    .map(Number);
  return {
    q: p.get('q') || '',
    model: p.get('model') || '',
    projection: p.get('projection') === 'umap' ? 'umap' : 'pca',
    sel,
  };
}

// ---- scatter ----
function ensureScatter() {
  if (scatter) return scatter;
  const canvas = $('scatter');
  scatter = createScatterplot({
    canvas,
    pointSize: 3,
    pointColor: [0.45, 0.5, 0.6, 0.55],
    pointColorActive: [0.85, 0.28, 0.06, 1],
    pointColorHover: [0.1, 0.45, 0.8, 1],
    lassoColor: [0.85, 0.28, 0.06, 1],
    backgroundColor: [1, 1, 1, 1],
    spatialIndexUseWorker: false, // a worker from a blob: URL would need a weaker CSP
    deselectOnEscape: false, // Escape is ours (clears the URL state too)
  });
  const tip = $('tooltip');
  let mouse = [0, 0];
  canvas.addEventListener('mousemove', (e) => {
    const r = canvas.getBoundingClientRect();
    mouse = [e.clientX - r.left, e.clientY - r.top];
  });
  scatter.subscribe('pointOver', (i) => {
    tip.textContent = `${tokenOf(i)}  #${i}`;
    tip.style.left = `${mouse[0] + 12}px`;
    tip.style.top = `${mouse[1] + 12}px`;
    tip.hidden = false;
  });
  scatter.subscribe('pointOut', () => {
    tip.hidden = true;
  });
  // Keyboard: with the scatter focused, arrows step through the selected rows (the tooltip
  // follows), Enter explores the current one.
  let cursor = -1;
  canvas.addEventListener('keydown', (e) => {
    const sel = state.selection;
    if ((e.key === 'ArrowRight' || e.key === 'ArrowDown' || e.key === 'ArrowLeft' || e.key === 'ArrowUp') && sel.length) {
      e.preventDefault();
      const step = e.key === 'ArrowRight' || e.key === 'ArrowDown' ? 1 : -1;
      cursor = (cursor + step + sel.length) % sel.length;
      const id = sel[cursor];
      const p = scatter.getScreenPosition(id);
      if (p) mouse = p;
      scatter.hover(id, { showReticleOnce: true });
      tip.textContent = `${tokenOf(id)}  #${id}`;
      tip.style.left = `${mouse[0] + 12}px`;
      tip.style.top = `${mouse[1] + 12}px`;
      tip.hidden = false;
    } else if (e.key === 'Enter' && cursor >= 0 && cursor < sel.length) {
      e.preventDefault();
      $('q').value = `#${sel[cursor]}`;
      search();
    }
  });
  scatter.subscribe('select', ({ points }) => {
    cursor = -1;
    showSelection(points);
  });
  scatter.subscribe('deselect', () => showSelection([]));
  new ResizeObserver(() => {
    scatter.set({ width: canvas.clientWidth, height: canvas.clientHeight });
  }).observe(canvas);
  return scatter;
}

function normalise(coords, rows) {
  // Both axes scaled by the larger range, so distances keep their ratio on screen.
  let x0 = Infinity;
  let x1 = -Infinity;
  let y0 = Infinity;
  let y1 = -Infinity;
  for (let i = 0; i < rows; i++) {
    const x = coords[2 * i];
    const y = coords[2 * i + 1];
    if (x < x0) x0 = x;
    if (x > x1) x1 = x;
    if (y < y0) y0 = y;
    if (y > y1) y1 = y;
  }
  const s = 1.9 / Math.max(x1 - x0, y1 - y0, 1e-12);
  const cx = (x0 + x1) / 2;
  const cy = (y0 + y1) / 2;
  const xs = new Float32Array(rows);
  const ys = new Float32Array(rows);
  for (let i = 0; i < rows; i++) {
    xs[i] = (coords[2 * i] - cx) * s;
    ys[i] = (coords[2 * i + 1] - cy) * s;
  }
  return { x: xs, y: ys };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function loadProjection() {
  const method = state.projection;
  const qs = new URLSearchParams(withModel({ method, dims: '2', format: 'f32' }));
  const bar = $('progress');
  const t0 = performance.now();
  document.body.dataset.scatter = 'loading';
  for (;;) {
    const res = await request(`/v1/projection?${qs}`, { binary: true });
    if (res.status === 202) {
      const s = await res.json();
      bar.hidden = false;
      bar.value = s.progress || 0;
      setStatus(`computing ${method.toUpperCase()} (${s.stage || ''}) ${Math.round(100 * (s.progress || 0))}%`);
      await sleep(300);
      continue;
    }
    bar.hidden = true;
    const rows = Number(res.headers.get('X-Rows'));
    const dims = Number(res.headers.get('X-Dims'));
    const buf = await res.arrayBuffer();
    if (!(dims >= 2) || buf.byteLength !== rows * dims * 4)
      throw new Error(`projection: ${buf.byteLength} bytes for ${rows} x ${dims} floats`);
    const all = new Float32Array(buf);
    const c = new Float32Array(rows * 2);
    for (let i = 0; i < rows; i++) {
      c[2 * i] = all[dims * i];
      c[2 * i + 1] = all[dims * i + 1];
    }
    state.coords = c;
    state.rows = rows;
    timings.projectionAt = performance.now();
    timings.projectionMs = performance.now() - t0;
    return;
  }
}

function idleStatus() {
  if (state.coords) setStatus(`${state.rows.toLocaleString()} rows, ${state.projection.toUpperCase()}`);
}

async function drawScatter() {
  const sp = ensureScatter();
  const pts = normalise(state.coords, state.rows);
  timings.drawStartAt = performance.now();
  await sp.draw(pts);
  timings.drawnMs = performance.now(); // since navigation start
  document.body.dataset.scatter = 'drawn';
  document.body.dataset.projection = state.projection;
  for (const id of ['export-xy-csv', 'export-xy-json']) $(id).disabled = false;
  idleStatus();
  if (pendingSelection) {
    const ids = pendingSelection;
    pendingSelection = null;
    selectRows(ids);
  }
}

async function showScatter() {
  try {
    await loadProjection();
    await drawScatter();
  } catch (e) {
    document.body.dataset.scatter = 'error';
    setStatus(`scatter: ${e.message}`, true);
  }
}

function selectRows(ids) {
  const valid = ids.filter((i) => i >= 0 && i < state.rows);
  if (!scatter || document.body.dataset.scatter !== 'drawn') {
    pendingSelection = ids;
    showSelection(ids);
    return;
  }
  if (valid.length) scatter.select(valid);
  else scatter.deselect();
}

// ---- selection ----
function showSelection(points) {
  state.selection = [...points];
  $('selection-count').textContent = String(points.length);
  const list = $('selection-list');
  clear(list);
  for (const id of points.slice(0, 1000)) {
    const li = document.createElement('li');
    li.dataset.id = String(id);
    const span = document.createElement('span');
    span.className = 'token';
    span.textContent = tokenOf(id);
    li.appendChild(span);
    li.appendChild(document.createTextNode(`  #${id}`));
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = 'explore';
    b.addEventListener('click', () => {
      $('q').value = `#${id}`;
      search();
    });
    li.appendChild(b);
    list.appendChild(li);
  }
  writeUrl();
}

// ---- search ----
function renderExplore(doc) {
  const used = doc.rows.find((r) => r.used) || doc.rows[0];
  $('query-info').textContent = used
    ? `${doc.query}: rows ${used.ids.join(', ')} (${used.tokens.join(' ')})`
    : doc.query;
  const tb = $('neighbors').tBodies[0];
  clear(tb);
  doc.neighbors.forEach((n, i) => {
    const tr = document.createElement('tr');
    tr.dataset.id = String(n.id);
    cell(tr, String(i + 1), 'num');
    cell(tr, String(n.id), 'num');
    cell(tr, n.token, 'token');
    cell(tr, fmt(n.score), 'num');
    cell(tr, n.label, `label-${n.label}`);
    cell(tr, n.evidence || '');
    tb.appendChild(tr);
  });
  const bb = $('baseline').tBodies[0];
  clear(bb);
  const base = doc.baseline;
  base.neighbors.forEach((n, i) => {
    const tr = document.createElement('tr');
    cell(tr, String(i + 1), 'num');
    cell(tr, n.token, 'token');
    cell(tr, fmt(base.top_scores[i]), 'num');
    cell(tr, fmt(base.expected_top_scores[i]), 'num');
    cell(tr, n.label, `label-${n.label}`);
    bb.appendChild(tr);
  });
  $('verdict').textContent = doc.verdict;
  for (const id of ['export-nb-csv', 'export-nb-json']) $(id).disabled = false;
  return used ? used.ids : [];
}

function regexSearch(src) {
  let re;
  try {
    re = new RegExp(src, 'u');
  } catch (e) {
    throw new Error(`bad regex: ${e.message}`);
  }
  const hits = [];
  if (state.tokens)
    for (let i = 0; i < state.tokens.length && hits.length < 5000; i++)
      if (re.test(state.tokens[i])) hits.push(i);
  setStatus(`${hits.length}${hits.length === 5000 ? '+' : ''} tokens match /${src}/`);
  return hits;
}

async function search() {
  const q = $('q').value.trim();
  writeUrl();
  if (!q) return;
  const t0 = performance.now();
  document.body.dataset.search = 'running';
  try {
    const m = /^\/(.+)\/$/.exec(q);
    if (m) {
      await vocabReady;
      const hits = regexSearch(m[1]);
      selectRows(hits);
      if (hits.length) {
        const doc = await request('/v1/explore', { method: 'POST', body: withModel({ query: `#${hits[0]}`, k: 10 }) });
        state.explore = doc;
        renderExplore(doc);
      }
    } else {
      idleStatus();
      const query = /^\d+$/.test(q) ? `#${q}` : q;
      const doc = await request('/v1/explore', { method: 'POST', body: withModel({ query, k: 10 }) });
      timings.searchFetchMs = performance.now() - t0;
      state.explore = doc;
      const own = renderExplore(doc);
      selectRows([...own, ...doc.neighbors.map((n) => n.id)]);
    }
    timings.searchMs = performance.now() - t0;
    document.body.dataset.search = 'done';
  } catch (e) {
    $('verdict').textContent = '';
    $('query-info').textContent = e.message;
    $('query-info').className = 'error';
    document.body.dataset.search = 'error';
    return;
  }
  $('query-info').className = '';
}

// ---- analogy and similarity ----
async function analogy(ev) {
  ev.preventDefault();
  const list = $('analogy-list');
  clear(list);
  try {
    const doc = await request('/v1/analogy', {
      method: 'POST',
      body: withModel({ a: $('an-a').value, b: $('an-b').value, c: $('an-c').value, k: 10 }),
    });
    for (const n of doc.neighbors || doc.results || []) {
      const li = document.createElement('li');
      li.textContent = `${n.token}  ${fmt(n.score)}  #${n.id}`;
      list.appendChild(li);
    }
  } catch (e) {
    const li = document.createElement('li');
    li.className = 'error';
    li.textContent = e.message;
    list.appendChild(li);
  }
}

async function similarity(ev) {
  ev.preventDefault();
  const list = $('similarity-list');
  clear(list);
  const sentences = $('sim-targets')
    .value.split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
  try {
    const doc = await request('/v1/similarity', {
      method: 'POST',
      body: withModel({ inputs: { source_sentence: $('sim-source').value, sentences } }),
    });
    doc.scores.forEach((s, i) => {
      const li = document.createElement('li');
      li.textContent = `${fmt(s)}  ${sentences[i]}`;
      list.appendChild(li);
    });
  } catch (e) {
    const li = document.createElement('li');
    li.className = 'error';
    li.textContent = e.message;
    list.appendChild(li);
  }
}

// ---- export ----
function csvField(v) {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
const csv = (rows) => rows.map((r) => r.map(csvField).join(',')).join('\n') + '\n';

function download(name, type, text) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

const safeName = (s) => s.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, 60) || 'query';

function exportNeighbors(asJson) {
  const d = state.explore;
  if (!d) return;
  const base = `neighbors-${safeName(d.query)}`;
  if (asJson) {
    download(`${base}.json`, 'application/json', JSON.stringify(d, null, 2));
    return;
  }
  const rows = [['rank', 'id', 'token', 'cosine', 'label', 'evidence']];
  d.neighbors.forEach((n, i) => rows.push([i + 1, n.id, n.token, n.score, n.label, n.evidence || '']));
  download(`${base}.csv`, 'text/csv', csv(rows));
}

async function exportCoords(asJson) {
  if (!state.coords) return;
  await vocabReady;
  const base = `coords-${state.projection}`;
  const n = state.rows;
  if (asJson) {
    const coords = new Array(n);
    for (let i = 0; i < n; i++) coords[i] = [state.coords[2 * i], state.coords[2 * i + 1]];
    const doc = { model: state.model, method: state.projection, dims: 2, rows: n, tokens: state.tokens, coords };
    download(`${base}.json`, 'application/json', JSON.stringify(doc));
    return;
  }
  const rows = [['id', 'token', 'x', 'y']];
  for (let i = 0; i < n; i++) rows.push([i, tokenOf(i), state.coords[2 * i], state.coords[2 * i + 1]]);
  download(`${base}.csv`, 'text/csv', csv(rows));
}

// ---- start-up ----
async function loadModels(wanted) {
  const doc = await request('/v1/models');
  state.models = doc.data.map((m) => m.id);
  const sel = $('model');
  clear(sel);
  for (const id of state.models) {
    const o = document.createElement('option');
    o.value = id;
    o.textContent = id;
    sel.appendChild(o);
  }
  state.model = state.models.includes(wanted) ? wanted : state.models[0] || '';
  sel.value = state.model;
  // One model: the switch would offer no choice.
  sel.hidden = state.models.length < 2;
  document.querySelector('label[for=model]').hidden = sel.hidden;
}

async function loadVocab() {
  const t0 = performance.now();
  const doc = await request(`/v1/vocab?${new URLSearchParams(withModel({ offset: '0' }))}`);
  const tokens = doc.tokens;
  while (tokens.length < doc.rows) {
    const more = await request(`/v1/vocab?${new URLSearchParams(withModel({ offset: String(tokens.length) }))}`);
    if (!more.count) break;
    tokens.push(...more.tokens);
  }
  state.tokens = tokens;
  timings.vocabMs = performance.now() - t0;
  if (state.selection.length) showSelection(state.selection); // relabel what is listed
}

async function start() {
  // Loading from here on: a restart (after the API key) must not leave the last attempt's
  // "error" showing while the models load.
  document.body.dataset.scatter = 'loading';
  const u = readUrl();
  $('q').value = u.q;
  state.projection = u.projection;
  $('projection').value = u.projection;
  try {
    await loadModels(u.model);
  } catch (e) {
    setStatus(e.message, true);
    document.body.dataset.scatter = 'error';
    return;
  }
  vocabReady = loadVocab().catch((e) => setStatus(`tokens: ${e.message}`, true));
  // The scatter needs only the coordinates: the tokens (hover, regex search) load beside it.
  const drawn = showScatter();
  if (u.q) await search();
  await drawn;
  if (u.sel.length) selectRows(u.sel);
}

function bind() {
  $('search-form').addEventListener('submit', (e) => {
    e.preventDefault();
    search();
  });
  $('analogy-form').addEventListener('submit', analogy);
  $('similarity-form').addEventListener('submit', similarity);
  $('clear-selection').addEventListener('click', () => selectRows([]));
  $('export-nb-csv').addEventListener('click', () => exportNeighbors(false));
  $('export-nb-json').addEventListener('click', () => exportNeighbors(true));
  $('export-xy-csv').addEventListener('click', () => exportCoords(false));
  $('export-xy-json').addEventListener('click', () => exportCoords(true));
  $('projection').addEventListener('change', (e) => {
    state.projection = e.target.value;
    writeUrl();
    showScatter();
  });
  $('model').addEventListener('change', async (e) => {
    state.model = e.target.value;
    state.explore = null;
    writeUrl();
    vocabReady = loadVocab();
    await showScatter();
  });
  $('auth').addEventListener('submit', (e) => {
    e.preventDefault();
    state.apiKey = $('api-key').value;
    sessionStorage.setItem('embedscope-api-key', state.apiKey);
    $('auth').hidden = true;
    start();
  });
  document.addEventListener('keydown', (e) => {
    const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName);
    if (e.key === '/' && !typing) {
      e.preventDefault();
      $('q').focus();
      $('q').select();
    } else if (e.key === 'Escape') {
      selectRows([]);
    }
  });
}

window.embedscope = {
  state,
  timings,
  get scatter() {
    return scatter;
  },
  search,
};
bind();
start();
