// Peer for bench/compare_hf_tokenizers.sh: Hugging Face tokenizers 0.22.2 (Rust) through the
// npm addon @anush008/tokenizers, single-threaded (TOKENIZERS_PARALLELISM=false, set by the
// script, makes encodeBatch sequential). Prints one JSON line like hf_tokenizer_bench.
//
//   node compare_hf_tokenizers.js TOKENIZER_JSON TEXT_FILE [RUNS=3]
'use strict';
const fs = require('fs');
const home = process.env.EMBEDSCOPE_HOME || (process.env.HOME + '/.cache/embedscope');
const { Tokenizer } = require(home + '/npm/node_modules/@anush008/tokenizers');
const [file, textFile, runsArg] = process.argv.slice(2);
const runs = parseInt(runsArg || '3', 10);
const text = fs.readFileSync(textFile, 'utf-8');
const lines = text.split('\n');
const mb = Buffer.byteLength(text, 'utf-8') / 1e6;
// Process CPU time (user + system, all threads: the addon's work runs on a libuv worker), as
// hf_tokenizer_bench measures ours; the shared box makes wall time mostly the neighbours'.
const now = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
(async () => {
  let load = 0, tok = null;
  for (let r = 0; r < runs; r++) {
    const t0 = now();
    tok = Tokenizer.fromFile(file);
    load += now() - t0;
  }
  let best = Infinity, tokens = 0;
  for (let r = 0; r < runs; r++) {
    const t0 = now();
    const encs = await tok.encodeBatch(lines, { addSpecialTokens: false });
    best = Math.min(best, now() - t0);
    tokens = encs.reduce((n, e) => n + e.getIds().length, 0);
  }
  const rep = 'a'.repeat(1 << 20);
  const t0 = now();
  const e = await tok.encode(rep, null, { addSpecialTokens: false });
  const repS = now() - t0;
  console.log(JSON.stringify({ load_ms: load / runs * 1e3, mb_per_s: mb / best, tokens,
                               repeat_1mb_ms: repS * 1e3, repeat_tokens: e.getIds().length,
                               threads: 1 }));
})().catch((err) => { console.error(err); process.exit(1); });
