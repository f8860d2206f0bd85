// The web page in a real browser: Debian's Chromium (/usr/bin/chromium, headless, WebGL through
// SwiftShader) driven by playwright-core (npm, web/package-lock.json), against embedscope-serve
// on a word2vec model numpy writes at test time (make_fixture.py). Run by ctest (web_browser):
//
//   node tests/web/browser_test.mjs     (env: ES_CLI, ES_SERVE, ES_WEB_NODE_MODULES, ES_ARTIFACTS)
//
// Checks, each against an oracle that is not the page: the neighbour table equals
// `embedscope explore computer --json` (ids, tokens, cosines, labels, evidence, baseline,
// verdict); a click on a point selects that row (its screen position from the scatter, its
// token from the model file); hover shows the token and id; Shift+drag lassoes exactly the points
// inside; the URL holds the state and a reload restores it; the neighbour CSV equals the CLI's
// list; the coordinate CSV equals GET /v1/projection's floats; the analogy panel equals
// `embedscope analogy`; a token that looks like HTML is shown as text (H7); "/" focuses the
// search box; no Content-Security-Policy violation and no page error. The screenshot is left
// in $ES_ARTIFACTS/web_page.png. Fails (never skips) when Chromium or playwright-core is missing.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const env = (name) => {
  const v = process.env[name];
  if (!v) fail(`environment variable ${name} is not set (ctest sets it)`);
  return v;
};
function fail(msg) {
  console.error(`FAIL: ${msg}`);
  process.exit(1);
}
let checks = 0;
let lastStep = Date.now();
function step(name) {
  const now = Date.now();
  console.log(`  ${name}: ${now - lastStep} ms`);
  lastStep = now;
}
function check(cond, msg) {
  if (!cond) throw new Error(`check failed: ${msg}`);
  checks++;
}
function checkEq(got, want, msg) {
  const g = JSON.stringify(got);
  const w = JSON.stringify(want);
  if (g !== w) throw new Error(`check failed: ${msg}\n  got:  ${g}\n  want: ${w}`);
  checks++;
}

const CHROMIUM = process.env.ES_CHROMIUM || '/usr/bin/chromium';
if (!fs.existsSync(CHROMIUM)) fail(`${CHROMIUM} not found: scripts/setup.sh installs Debian's chromium`);
const nodeModules = env('ES_WEB_NODE_MODULES');
let chromium;
try {
  ({ chromium } = createRequire(path.join(nodeModules, 'x.js'))('playwright-core'));
} catch (e) {
  fail(`playwright-core not found under ${nodeModules} (scripts/setup.sh runs npm ci): ${e.message}`);
}
const CLI = env('ES_CLI');
const SERVE = env('ES_SERVE');
const artifacts = env('ES_ARTIFACTS');
fs.mkdirSync(artifacts, { recursive: true });

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'es-web-'));
const model = path.join(tmp, 'vec.txt');
execFileSync('/usr/bin/python3', [path.join(here, 'make_fixture.py'), model]);
const fileWords = fs
  .readFileSync(model, 'utf8')
  .split('\n')
  .slice(1)
  .filter(Boolean)
  .map((l) => l.split(' ')[0]);
const cliJson = (...args) => JSON.parse(execFileSync(CLI, [...args, '--model', model, '--json'], { encoding: 'utf8' }));
const expected = cliJson('explore', 'computer', '-k', '10');
const expectedAnalogy = cliJson('analogy', 'man', 'king', 'woman', '-k', '10');

// numpy: cosine of "computer"'s row with "computers"' and "banana"'s (the similarity oracle).
const COSINES = `
import json, sys, numpy as np
rows = {l.split(' ')[0]: np.array(l.split(' ')[1:], dtype=np.float64)
        for l in open(sys.argv[1]).read().split('\\n')[1:] if l.strip()}
a = rows['computer']
print(json.dumps([float(a @ rows[w] / np.linalg.norm(a) / np.linalg.norm(rows[w])) for w in ('computers', 'banana')]))
`;

// ---- the server ----
function startServer(extra = []) {
  return new Promise((resolve, reject) => {
    // Its own EMBEDSCOPE_HOME: the projection's disk cache goes to the test's folder, not the user's.
    const p = spawn(SERVE, ['--model', model, '--port', '0', '--threads', '2', ...extra], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, EMBEDSCOPE_HOME: path.join(tmp, 'home') },
    });
    let log = '';
    const timer = setTimeout(() => reject(new Error(`embedscope-serve did not start:\n${log}`)), 20000);
    p.stderr.on('data', (d) => {
      log += d;
      const m = /listening on (http:\/\/[^\s]+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve({ proc: p, url: m[1].replace(/\/$/, ''), log: () => log });
      }
    });
    p.on('exit', (code) => reject(new Error(`embedscope-serve exited ${code}:\n${log}`)));
  });
}

async function projectionFloats(base) {
  // The route may answer 202 while it computes (the page shows a progress bar meanwhile).
  for (let i = 0; i < 600; i++) {
    const r = await fetch(`${base}/v1/projection?method=pca&dims=2&format=f32`);
    if (r.status === 200) return { rows: Number(r.headers.get('X-Rows')), xy: new Float32Array(await r.arrayBuffer()) };
    check(r.status === 202, `GET /v1/projection: status ${r.status}`);
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error('projection never became ready');
}

function parseCsv(text) {
  const rows = [];
  let row = [];
  let f = '';
  let q = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (q) {
      if (c === '"' && text[i + 1] === '"') {
        f += '"';
        i++;
      } else if (c === '"') q = false;
      else f += c;
    } else if (c === '"') q = true;
    else if (c === ',') {
      row.push(f);
      f = '';
    } else if (c === '\n') {
      row.push(f);
      rows.push(row);
      row = [];
      f = '';
    } else f += c;
  }
  if (f || row.length) rows.push([...row, f]);
  return rows;
}

// ---- page helpers ----
const waitDrawn = (page) =>
  page.waitForFunction(() => ['drawn', 'error'].includes(document.body.dataset.scatter), null, { timeout: 60000 });
const waitSearch = (page) =>
  page.waitForFunction(() => ['done', 'error'].includes(document.body.dataset.search), null, { timeout: 30000 });

async function neighbourTable(page) {
  return page.$$eval('#neighbors tbody tr', (trs) =>
    trs.map((tr) => [...tr.children].map((td) => td.textContent)),
  );
}

function checkTable(rows, what) {
  checkEq(rows.length, expected.neighbors.length, `${what}: neighbour rows`);
  expected.neighbors.forEach((n, i) => {
    checkEq(rows[i], [String(i + 1), String(n.id), n.token, n.score.toFixed(4), n.label, n.evidence], `${what}: row ${i + 1}`);
  });
}

async function download(page, button) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
  const p = path.join(tmp, dl.suggestedFilename());
  await dl.saveAs(p);
  return { name: dl.suggestedFilename(), text: fs.readFileSync(p, 'utf8') };
}

async function main() {
  const server = await startServer();
  const base = server.url;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // --no-sandbox: CI runs as root, where Chromium's sandbox cannot start.
    args: ['--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--no-sandbox'],
  });
  const problems = [];
  try {
    const ctx = await browser.newContext({ viewport: { width: 1400, height: 900 }, acceptDownloads: true });
    const page = await ctx.newPage();
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) problems.push(`console ${m.type()}: ${m.text()}`);
    });
    // The progress bar, seen from outside the page: every time it is shown, with its value.
    await page.addInitScript(() => {
      window.__progress = [];
      new MutationObserver((ms) => {
        for (const m of ms)
          if (m.target.id === 'progress' && !m.target.hidden) window.__progress.push(m.target.value);
      }).observe(document, { subtree: true, attributes: true, attributeFilter: ['hidden', 'value'] });
    });
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => {
        console.error(`Content Security Policy violation: ${e.violatedDirective} ${e.blockedURI}`);
      });
    });

    step('before step 1');
    // 1. Load, search "computer" by typing, compare with the CLI.
    await page.goto(`${base}/`);
    await waitDrawn(page);
    checkEq(await page.evaluate(() => document.body.dataset.scatter), 'drawn', `scatter drawn (status: ${await page.textContent('#status')})`);
    checkEq(await page.evaluate(() => window.embedscope.state.rows), fileWords.length, 'every row is drawn');
    // A fresh server answers the first projection request 202 (computing): the bar showed.
    const progress = await page.evaluate(() => window.__progress);
    check(progress.length >= 1 && progress.every((v) => v >= 0 && v <= 1), `progress bar shown while computing: ${JSON.stringify(progress)}`);
    checkEq(await page.evaluate(() => document.getElementById('progress').hidden), true, 'progress bar hidden once drawn');
    await page.keyboard.press('/');
    checkEq(await page.evaluate(() => document.activeElement.id), 'q', '"/" focuses the search box');
    await page.keyboard.type('computer');
    await page.keyboard.press('Enter');
    await waitSearch(page);
    checkEq(await page.evaluate(() => document.body.dataset.search), 'done', 'search done');
    checkTable(await neighbourTable(page), 'after search');
    const baseRows = await page.$$eval('#baseline tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    checkEq(baseRows.length, expected.baseline.neighbors.length, 'baseline rows');
    expected.baseline.neighbors.forEach((n, i) => {
      checkEq(baseRows[i][1], n.token, `baseline token ${i + 1}`);
      checkEq(baseRows[i][2], expected.baseline.top_scores[i].toFixed(4), `baseline cosine ${i + 1}`);
      checkEq(baseRows[i][4], n.label, `baseline label ${i + 1}`);
    });
    checkEq(await page.textContent('#verdict'), expected.verdict, 'verdict');
    const hiIds = await page.evaluate(() => window.embedscope.state.selection);
    checkEq([...hiIds].sort((a, b) => a - b), [0, ...expected.neighbors.map((n) => n.id)].sort((a, b) => a - b), 'neighbours highlighted in the scatter');

    // Keyboard: on the focused scatter, arrows step through the highlighted rows and Enter
    // explores the current one.
    await page.focus('#scatter');
    await page.keyboard.press('ArrowRight');
    const firstSel = (await page.evaluate(() => window.embedscope.state.selection))[0];
    checkEq(await page.textContent('#tooltip'), `${fileWords[firstSel]}  #${firstSel}`, 'arrow key shows the first selected row');
    await page.keyboard.press('ArrowRight');
    const secondSel = (await page.evaluate(() => window.embedscope.state.selection))[1];
    checkEq(await page.textContent('#tooltip'), `${fileWords[secondSel]}  #${secondSel}`, 'arrow key steps to the next');
    await page.evaluate(() => {
      document.body.dataset.search = '';
    });
    await page.keyboard.press('Enter');
    await waitSearch(page);
    checkEq(await page.inputValue('#q'), `#${secondSel}`, 'Enter explores the current row');
    checkEq(await page.evaluate(() => window.embedscope.state.explore.rows[0].ids), [secondSel], 'explored by id');
    await page.fill('#q', 'computer');
    await page.press('#q', 'Enter');
    await waitSearch(page);
    checkTable(await neighbourTable(page), 'after searching again');

    step('before step 2');
    // 2. Export the neighbour list as CSV: equals the CLI's list.
    const nbCsv = await download(page, '#export-nb-csv');
    const nb = parseCsv(nbCsv.text);
    checkEq(nb[0], ['rank', 'id', 'token', 'cosine', 'label', 'evidence'], 'neighbour CSV header');
    checkEq(nb.length, expected.neighbors.length + 1, 'neighbour CSV rows');
    expected.neighbors.forEach((n, i) => {
      const r = nb[i + 1];
      checkEq([r[0], r[1], r[2], r[4], r[5]], [String(i + 1), String(n.id), n.token, n.label, n.evidence], `CSV row ${i + 1}`);
      check(Math.abs(Number(r[3]) - n.score) < 1e-6, `CSV cosine ${i + 1}: ${r[3]} vs ${n.score}`);
    });

    const nbJson = JSON.parse((await download(page, '#export-nb-json')).text);
    checkEq(nbJson, expected, 'neighbour JSON export is the explore document');

    step('before step 3');
    // 3. Coordinates CSV equals the projection route's floats; tokens are the file's words.
    const proj = await projectionFloats(base);
    checkEq(proj.rows, fileWords.length, 'projection rows');
    const xy = parseCsv((await download(page, '#export-xy-csv')).text);
    checkEq(xy.length, proj.rows + 1, 'coordinate CSV rows');
    for (let i = 0; i < proj.rows; i++) {
      const r = xy[i + 1];
      if (r[0] !== String(i) || r[1] !== fileWords[i] || Number(r[2]) !== proj.xy[2 * i] || Number(r[3]) !== proj.xy[2 * i + 1])
        throw new Error(`coordinate CSV row ${i}: ${JSON.stringify(r)} vs ${fileWords[i]} ${proj.xy[2 * i]} ${proj.xy[2 * i + 1]}`);
    }
    checks++;
    const xyJson = JSON.parse((await download(page, '#export-xy-json')).text);
    checkEq([xyJson.method, xyJson.dims, xyJson.rows], ['pca', 2, proj.rows], 'coordinate JSON header');
    checkEq(xyJson.tokens, fileWords, 'coordinate JSON tokens');
    checkEq(xyJson.coords.flat(), Array.from(proj.xy), 'coordinate JSON coords');

    step('before step 4');
    // 4. Click a point: the most isolated one on screen, so the click cannot hit another.
    const canvasBox = await page.locator('#scatter').boundingBox();
    const pick = await page.evaluate(() => {
      const sp = window.embedscope.scatter;
      const n = window.embedscope.state.rows;
      const pos = [];
      for (let i = 0; i < n; i++) pos.push(sp.getScreenPosition(i));
      let best = -1;
      let bestD = -1;
      for (let i = 0; i < n; i++) {
        let d = Infinity;
        for (let j = 0; j < n; j++)
          if (j !== i) d = Math.min(d, Math.hypot(pos[i][0] - pos[j][0], pos[i][1] - pos[j][1]));
        if (d > bestD) {
          bestD = d;
          best = i;
        }
      }
      return { id: best, x: pos[best][0], y: pos[best][1], gap: bestD };
    });
    check(pick.gap > 8, `an isolated point exists (${pick.gap} px)`);
    await page.mouse.move(canvasBox.x + pick.x, canvasBox.y + pick.y);
    await page.waitForFunction(() => !document.getElementById('tooltip').hidden, null, { timeout: 20000 });
    checkEq(await page.textContent('#tooltip'), `${fileWords[pick.id]}  #${pick.id}`, 'hover shows token and id');
    await page.mouse.click(canvasBox.x + pick.x, canvasBox.y + pick.y);
    await page.waitForFunction((id) => {
      const s = window.embedscope.state.selection;
      return s.length === 1 && s[0] === id;
    }, pick.id, { timeout: 20000 });
    const selList = await page.$$eval('#selection-list li', (lis) => lis.map((li) => [li.dataset.id, li.querySelector('.token').textContent]));
    checkEq(selList, [[String(pick.id), fileWords[pick.id]]], 'click selects the point');
    const url = new URL(page.url());
    checkEq([url.searchParams.get('q'), url.searchParams.get('sel')], ['computer', String(pick.id)], 'state in the URL');

    step('before step 5');
    // 5. Reload from the URL: the same search and selection.
    await page.reload();
    await waitDrawn(page);
    await waitSearch(page);
    await page.waitForFunction((id) => {
      const s = window.embedscope.state.selection;
      return s.length === 1 && s[0] === id;
    }, pick.id, { timeout: 30000 });
    checkEq(await page.inputValue('#q'), 'computer', 'reload: query');
    checkTable(await neighbourTable(page), 'after reload');
    checkEq(await page.$$eval('#selection-list li', (lis) => lis.map((li) => li.dataset.id)), [String(pick.id)], 'reload: selection');

    step('before step 6');
    // 6. Lasso (Shift+drag) a rectangle: exactly the points inside it are selected.
    const W = canvasBox.width;
    const H = canvasBox.height;
    const rect = [W * 0.35, H * 0.35, W * 0.65, H * 0.65];
    const inside = await page.evaluate(([x0, y0, x1, y1]) => {
      const sp = window.embedscope.scatter;
      const strict = [];
      const loose = [];
      for (let i = 0; i < window.embedscope.state.rows; i++) {
        const [x, y] = sp.getScreenPosition(i);
        if (x > x0 + 2 && x < x1 - 2 && y > y0 + 2 && y < y1 - 2) strict.push(i);
        if (x > x0 - 2 && x < x1 + 2 && y > y0 - 2 && y < y1 + 2) loose.push(i);
      }
      return { strict, loose };
    }, rect);
    check(inside.strict.length >= 5, `the lasso rectangle holds points (${inside.strict.length})`);
    await page.keyboard.down('Shift');
    await page.mouse.move(canvasBox.x + rect[0], canvasBox.y + rect[1]);
    await page.mouse.down();
    const corners = [[rect[2], rect[1]], [rect[2], rect[3]], [rect[0], rect[3]], [rect[0], rect[1]]];
    for (const [x, y] of corners) await page.mouse.move(canvasBox.x + x, canvasBox.y + y, { steps: 2 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    await page.waitForFunction((n) => window.embedscope.state.selection.length >= n, inside.strict.length, { timeout: 20000 });
    const lassoed = await page.evaluate(() => window.embedscope.state.selection);
    for (const id of inside.strict) check(lassoed.includes(id), `lasso selected row ${id}`);
    for (const id of lassoed) check(inside.loose.includes(id), `lasso selected only points inside (row ${id})`);
    checkEq(await page.textContent('#selection-count'), String(lassoed.length), 'lasso: the group is listed');
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => window.embedscope.state.selection.length === 0, null, { timeout: 20000 });

    step('before step 7');
    // 7. A token that looks like HTML is text, never markup (H7): regex search selects it.
    await page.fill('#q', '/^<b>/');
    await page.press('#q', 'Enter');
    await waitSearch(page);
    const boldId = fileWords.indexOf('<b>bold</b>');
    checkEq(await page.evaluate(() => window.embedscope.state.selection), [boldId], 'regex search selects the matching rows');
    checkEq(await page.$$eval('#selection-list li .token', (s) => s.map((x) => x.textContent)), ['<b>bold</b>'], 'token shown as text');
    checkEq(await page.$$eval('#selection-list b, #neighbors b, #query-info b', (b) => b.length), 0, 'no element made from token text');
    const imgWord = '<img/src=x/onerror=window.__pwned=1>';
    await page.fill('#q', '/onerror/');
    await page.press('#q', 'Enter');
    await waitSearch(page);
    checkEq(await page.evaluate(() => window.embedscope.state.selection), [fileWords.indexOf(imgWord)], 'regex search finds the markup token');
    checkEq(await page.$$eval('#selection-list li .token', (s) => s.map((x) => x.textContent)), [imgWord], 'markup token shown as text');
    checkEq(await page.$$eval('img', (i) => i.length), 0, 'no img element made from token text');
    checkEq(await page.evaluate(() => window.__pwned), undefined, 'no handler ran');

    step('before step 8');
    // 8. Analogy panel equals the CLI.
    await page.fill('#an-a', 'man');
    await page.fill('#an-b', 'king');
    await page.fill('#an-c', 'woman');
    await page.press('#an-c', 'Enter');
    await page.waitForFunction(() => document.querySelectorAll('#analogy-list li').length > 0, null, { timeout: 30000 });
    const an = await page.$$eval('#analogy-list li', (lis) => lis.map((li) => li.textContent));
    checkEq(an, expectedAnalogy.neighbors.map((n) => `${n.token}  ${n.score.toFixed(4)}  #${n.id}`), 'analogy list');
    checkEq(expectedAnalogy.neighbors[0].token, 'queen', 'analogy answer (fixture planted)');

    step('before step 9');
    // 9. Similarity panel equals numpy's cosines of the words' rows.
    await page.fill('#sim-source', 'computer');
    await page.fill('#sim-targets', 'computers\nbanana');
    await page.click('#similarity-form button');
    await page.waitForFunction(() => document.querySelectorAll('#similarity-list li').length === 2, null, { timeout: 30000 });
    const sims = await page.$$eval('#similarity-list li', (lis) => lis.map((li) => li.textContent));
    const cos = JSON.parse(
      execFileSync('/usr/bin/python3', ['-c', COSINES, model], { encoding: 'utf8' }),
    );
    checkEq(sims, [`${cos[0].toFixed(4)}  computers`, `${cos[1].toFixed(4)}  banana`], 'similarity panel');

    step('before step 10');
    // 10. Switch to UMAP (computed by the server, progress shown): drawn from the route's
    // floats, kept in the URL, restored by a reload.
    await page.focus('#projection');
    await page.selectOption('#projection', 'umap');
    const umapDrawn = () =>
      page.waitForFunction(() => document.body.dataset.scatter === 'drawn' && document.body.dataset.projection === 'umap', null, { timeout: 60000 });
    await umapDrawn();
    checkEq(new URL(page.url()).searchParams.get('projection'), 'umap', 'projection in the URL');
    const umap = await fetch(`${base}/v1/projection?method=umap&dims=2&format=json`).then((r) => r.json());
    checkEq(umap.rows, fileWords.length, 'UMAP rows');
    const pageUmap = await page.evaluate(() => Array.from(window.embedscope.state.coords));
    checkEq(pageUmap, umap.coords.flat().map((v) => Math.fround(v)), 'the page draws the route\'s UMAP coordinates');
    await page.reload();
    await umapDrawn();
    checkEq(await page.inputValue('#projection'), 'umap', 'reload: projection');

    await page.fill('#q', 'computer');
    await page.press('#q', 'Enter');
    await waitSearch(page);
    step('before screenshot');
    await page.evaluate(() => {
      document.querySelector('aside').scrollTop = 0;
      document.activeElement.blur();
    });
    await page.screenshot({ path: path.join(artifacts, 'web_page.png') });
    checkEq(problems, [], 'no page errors, console errors or CSP violations');

    // 11. A server with --api-key: the page loads without the key, asks for it, then works.
    step('before step 11');
    const keyed = await startServer(['--api-key', 'sekrit-key']);
    try {
      const kp = await ctx.newPage();
      await kp.goto(`${keyed.url}/?q=computer`);
      await kp.waitForFunction(() => !document.getElementById('auth').hidden, null, { timeout: 30000 });
      await kp.fill('#api-key', 'sekrit-key');
      await kp.press('#api-key', 'Enter');
      await waitDrawn(kp);
      await waitSearch(kp);
      checkEq(await kp.evaluate(() => [document.body.dataset.scatter, window.embedscope.state.rows]), ['drawn', fileWords.length], 'keyed server: scatter drawn after the key');
      checkTable(await neighbourTable(kp), 'keyed server');
      checkEq(await kp.evaluate(() => document.getElementById('auth').hidden), true, 'key form hidden again');
    } finally {
      keyed.proc.kill('SIGTERM');
    }
  } finally {
    await browser.close();
    server.proc.kill('SIGTERM');
  }
  console.log(`web_browser: ${checks} checks passed; screenshot ${path.join(artifacts, 'web_page.png')}`);
}

main()
  .catch((e) => {
    console.error(`FAIL: ${e.stack || e.message}`);
    process.exitCode = 1;
  })
  .finally(() => fs.rmSync(tmp, { recursive: true, force: true }));
