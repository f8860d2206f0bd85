// The web page's speed in headless Chromium on loopback (issue 23's targets): time from
// navigation to the scatter of every row drawn, once the projection is cached (< 2 s), and from a
// search to its neighbour list shown (< 100 ms).
//
//   node bench/web_bench.mjs [--model M] [--runs 5]
//   (env: ES_SERVE=build/bin/embedscope-serve, ES_WEB_NODE_MODULES=~/.cache/embedscope/web/node_modules)
//
// Without --model it writes a 50,257 x 768 GPT-2-shaped table (numpy, seeded, as safetensors
// tensor wte.weight: GPT-2's tokenizer labels its rows) into a temporary folder. Chromium is Debian's
// (/usr/bin/chromium), WebGL through SwiftShader (no GPU): a desktop browser with a GPU draws
// faster. Prints one JSON line with the medians and every run.
//
// Where a search's time goes: each explore request seen from the page is split by the Resource
// Timing API (queued before sending, waiting for the first byte, downloading) and the server's
// own time for it is read from its access log (the `embedscope-serve` line's milliseconds).
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const SERVE = process.env.ES_SERVE || 'build/bin/embedscope-serve';
const NM = process.env.ES_WEB_NODE_MODULES || path.join(os.homedir(), '.cache/embedscope/web/node_modules');
const CHROMIUM = process.env.ES_CHROMIUM || '/usr/bin/chromium';
const runs = Number(arg('runs', '5'));
const { chromium } = createRequire(path.join(NM, 'x.js'))('playwright-core');
let serverLog = ''; // the server's stderr: its access log

const MAKE_TABLE = `
import json, struct, sys, numpy as np
W = np.random.default_rng(0).normal(0, 0.1, (50257, 768)).astype(np.float32)
raw = W.tobytes()
hdr = json.dumps({"wte.weight": {"dtype": "F32", "shape": list(W.shape), "data_offsets": [0, len(raw)]}}).encode()
hdr += b" " * (-len(hdr) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(hdr)) + hdr + raw)
`;
let model = arg('model', '');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'es-webbench-'));
if (!model) {
  // GPT-2's own layout (safetensors, tensor wte.weight): the handle gives it GPT-2's tokenizer
  // and GPT-2's init (normal:0.02) for the random baseline.
  model = path.join(tmp, 'gpt2_shaped.safetensors');
  execFileSync('/usr/bin/python3', ['-c', MAKE_TABLE, model]);
}

function startServer() {
  return new Promise((resolve, reject) => {
    // A home of its own (projection cache files stay out of the user's cache) that sees the
    // user's npm data (GPT-2's vocabulary). Access log on: it times each request server-side.
    const home = path.join(tmp, 'home');
    fs.mkdirSync(home, { recursive: true });
    const userHome = process.env.EMBEDSCOPE_HOME || path.join(os.homedir(), '.cache/embedscope');
    fs.symlinkSync(path.join(userHome, 'npm'), path.join(home, 'npm'));
    const p = spawn(SERVE, ['--model', model, '--port', '0'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, EMBEDSCOPE_HOME: home },
    });
    let log = '';
    p.stderr.on('data', (d) => {
      log += d;
      serverLog += d;
      const m = /listening on (http:\/\/[^\s]+)/.exec(log);
      if (m) resolve({ proc: p, url: m[1].replace(/\/$/, '') });
    });
    p.on('exit', (code) => reject(new Error(`embedscope-serve exited ${code}: ${log}`)));
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
// The server's time (ms) of its latest POST /v1/explore, from the access log.
const lastServerMs = () => {
  const m = [...serverLog.matchAll(/POST \/v1\/explore 200 \d+ ([\d.]+)ms/g)].pop();
  return m ? Number(m[1]) : NaN;
};

const server = await startServer();
const base = server.url;
// Cache the projection and warm the labeller (WordNet is opened on the first explore).
const t0 = Date.now();
for (;;) {
  const r = await fetch(`${base}/v1/projection?method=pca&dims=2&format=f32`);
  await r.arrayBuffer();
  if (r.status === 200) break;
  if (r.status !== 202) throw new Error(`projection: ${r.status}`);
  await new Promise((res) => setTimeout(res, 200));
}
const projectionS = (Date.now() - t0) / 1000;
await fetch(`${base}/v1/explore`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"query":"computer"}' });

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ['--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--no-sandbox'],
});
const drawn = [];
const searches = [];
const fetches = []; // of which: the explore request, seen from the page
const split = { queued: [], waiting: [], download: [], server: [] }; // the request's parts
let rows = 0;
const words = ['computer', 'science', 'music', 'water', 'house', 'king', 'river', 'green', 'money', 'night'];
for (let i = 0; i < runs; i++) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(`${base}/`);
  await page.waitForFunction(() => ['drawn', 'error'].includes(document.body.dataset.scatter), null, { timeout: 120000 });
  const t = await page.evaluate(() => ({ s: document.body.dataset.scatter, ...window.embedscope.timings, rows: window.embedscope.state.rows }));
  if (t.s !== 'drawn') throw new Error(`scatter: ${await page.textContent('#status')}`);
  drawn.push(t.drawnMs);
  rows = t.rows;
  for (const w of words) {
    await page.fill('#q', w);
    await page.evaluate(() => {
      document.body.dataset.search = '';
    });
    await page.press('#q', 'Enter');
    await page.waitForFunction(() => ['done', 'error'].includes(document.body.dataset.search), null, { timeout: 30000 });
    const st = await page.evaluate(() => window.embedscope.timings);
    searches.push(st.searchMs);
    fetches.push(st.searchFetchMs);
    const rt = await page.evaluate(() => {
      const e = performance.getEntriesByType('resource').filter((x) => x.name.endsWith('/v1/explore')).pop();
      return { queued: e.requestStart - e.startTime, waiting: e.responseStart - e.requestStart, download: e.responseEnd - e.responseStart };
    });
    for (const k of ['queued', 'waiting', 'download']) split[k].push(rt[k]);
    split.server.push(lastServerMs());
  }
  await page.close();
}
await browser.close();
// The same searches straight to the route (no page): what of the search time is the server's.
const direct = [];
const directServer = [];
for (let i = 0; i < runs; i++)
  for (const w of words) {
    const t = performance.now();
    const r = await fetch(`${base}/v1/explore`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ query: w, k: 10 }) });
    await r.json();
    direct.push(performance.now() - t);
    directServer.push(lastServerMs());
  }
server.proc.kill('SIGTERM');
fs.rmSync(tmp, { recursive: true, force: true });
console.log(
  JSON.stringify({
    rows,
    runs,
    projection_first_s: projectionS,
    navigation_to_drawn_ms_median: median(drawn),
    search_to_list_ms_median: median(searches),
    of_which_request_ms_median: median(fetches),
    request_queued_ms_median: median(split.queued),
    request_waiting_first_byte_ms_median: median(split.waiting),
    request_download_ms_median: median(split.download),
    server_explore_ms_median_page_open: median(split.server),
    explore_route_alone_ms_median: median(direct),
    server_explore_ms_median_no_browser: median(directServer),
    load_average_1min: os.loadavg()[0],
    navigation_to_drawn_ms: drawn.map((x) => Math.round(x)),
    search_to_list_ms: searches.map((x) => Math.round(x * 10) / 10),
  }),
);
