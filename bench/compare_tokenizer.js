// Peers for bench/compare_tokenizer.sh: encodes the Brown plain text (argv[2]) line by line with
// @dqbd/tiktoken (WASM, "gpt2") and gpt-3-encoder; prints JSON with MB/s (best of N runs), token
// counts and load times. Line by line because gpt-3-encoder is quadratic on one long string
// (it grows its result with Array.concat per pre-token): 1 MB in one call takes minutes.
'use strict';
const fs = require('fs');
const home = process.env.EMBEDSCOPE_HOME || (process.env.HOME + '/.cache/embedscope');
const nm = home + '/npm/node_modules/';
const text = fs.readFileSync(process.argv[2], 'utf-8');
const runs = parseInt(process.argv[3] || '3', 10);
const lines = text.split('\n');
const mb = Buffer.byteLength(text, 'utf-8') / 1e6;
const now = () => Number(process.hrtime.bigint()) / 1e9;
function bench(encode) {
  let best = Infinity, n = 0;
  for (let r = 0; r < runs; r++) {
    const t0 = now();
    n = 0;
    for (const line of lines) n += encode(line).length;
    best = Math.min(best, now() - t0);
  }
  return { mb_per_s: mb / best, seconds: best, tokens: n };
}
let t0 = now();
const { get_encoding } = require(nm + '@dqbd/tiktoken');
const enc = get_encoding('gpt2');
const tiktoken_load_ms = (now() - t0) * 1e3;
t0 = now();
const g3 = require(nm + 'gpt-3-encoder');
const g3_load_ms = (now() - t0) * 1e3;
const out = {
  bytes: Buffer.byteLength(text, 'utf-8'),
  tiktoken_wasm: Object.assign(bench((s) => enc.encode(s, [], [])), { load_ms: tiktoken_load_ms }),
  gpt3_encoder: Object.assign(bench((s) => g3.encode(s)), { load_ms: g3_load_ms }),
};
console.log(JSON.stringify(out));
