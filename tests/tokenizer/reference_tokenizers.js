// Reference ids for the tokenizer parity tests, from the npm packages setup installs:
// gpt-3-encoder (OpenAI's encoder.py ported to JS) and @dqbd/tiktoken (tiktoken's Rust core as
// WASM, encoding "gpt2"). Run by tests/tokenizer/parity_test.cpp with /usr/bin/node.
//
//   node reference_tokenizers.js lines IN OUT        one JSON line per input line:
//        {"t": [tiktoken ids], "g": [gpt-3-encoder ids]} ("g" only when it differs from "t")
//   node reference_tokenizers.js random SEED N RANGES OUT
//        generates N random strings (seeded, deterministic) from the code point ranges listed in
//        RANGES ("lo hi" hex per line) plus targeted pieces, and writes {"s", "t", "g"} lines.
// Special tokens are plain text for both (tiktoken: allowed_special = disallowed_special = []).
'use strict';
const fs = require('fs');
const home = process.env.EMBEDSCOPE_HOME || (process.env.HOME + '/.cache/embedscope');
const nm = home + '/npm/node_modules/';
const { get_encoding } = require(nm + '@dqbd/tiktoken');
const g3 = require(nm + 'gpt-3-encoder');
const enc = get_encoding('gpt2');

// {"t": tiktoken ids} plus "g": gpt-3-encoder ids only when they differ (keeps files small).
function encodeBoth(s) {
  const t = Array.from(enc.encode(s, [], []));
  const g = g3.encode(s);
  const same = t.length === g.length && t.every((x, i) => x === g[i]);
  return same ? { t } : { t, g };
}

function mulberry32(seed) {
  return function () {
    seed |= 0; seed = (seed + 0x6D2B79F5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomStrings(seed, n, rangesFile) {
  const rnd = mulberry32(seed);
  const pick = (a) => a[Math.floor(rnd() * a.length)];
  const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1));
  const ranges = fs.readFileSync(rangesFile, 'utf-8').trim().split('\n').map(
      (l) => l.split(' ').map((x) => parseInt(x, 16)));
  let total = 0;
  const cum = ranges.map(([lo, hi]) => (total += hi - lo + 1));
  const anyAssigned = () => {  // uniform over the listed (assigned, all planes) code points
    const r = Math.floor(rnd() * total);
    let i = 0;
    while (cum[i] <= r) i++;
    const [lo, hi] = ranges[i];
    return String.fromCodePoint(lo + (r - (cum[i] - (hi - lo + 1))));
  };
  const fromRange = (lo, hi) => String.fromCodePoint(int(lo, hi));
  const spaces = [' ', ' ', ' ', '\t', '\n', '\r', '\v', '\f', '\u00A0', '\u1680', '\u2003',
                  '\u200A', '\u2028', '\u2029', '\u202F', '\u205F', '\u3000', '\r\n'];
  const punct = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~¡§«»¿–—‘’“”…€';
  const contractions = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", "'x", "'"];
  const emoji = ['😀', '👍🏽', '👨‍👩‍👧‍👦', '🇺🇸', '🏳️‍🌈', '❤️', '🤷‍♀️', '1️⃣'];
  const words = ['the', 'The', ' computer', 'naïve', 'Straße', 'ﬁsh', 'İstanbul', 'δοκιμή',
                 'тест', '日本語', '한국어', 'עברית', 'العربية', 'हिन्दी', 'ไทย', '<|endoftext|>'];
  const gens = [
    () => { let s = ''; for (let k = int(1, 8); k > 0; k--) s += fromRange(0x61, 0x7A); return s; },
    () => { let s = ''; for (let k = int(1, 12); k > 0; k--) s += fromRange(0x30, 0x39); return s; },
    () => { let s = ''; for (let k = int(1, 5); k > 0; k--) s += pick(punct); return s; },
    () => { let s = ''; for (let k = int(1, 5); k > 0; k--) s += pick(spaces); return s; },
    () => pick(contractions),
    () => pick(emoji),
    () => pick(words),
    () => fromRange(0x41, 0x5A) + fromRange(0x300, 0x36F) + fromRange(0x300, 0x36F),  // combining
    () => { let s = ''; for (let k = int(1, 6); k > 0; k--) s += fromRange(0x4E00, 0x9FFF); return s; },
    () => { let s = ''; for (let k = int(1, 6); k > 0; k--) s += fromRange(0x5D0, 0x5EA); return s; },
    () => { let s = ''; for (let k = int(1, 6); k > 0; k--) s += fromRange(0x620, 0x64A); return s; },
    () => fromRange(0x0, 0x1F) + (rnd() < 0.5 ? fromRange(0x7F, 0x9F) : ''),  // controls
    () => { let s = ''; for (let k = int(1, 4); k > 0; k--) s += anyAssigned(); return s; },
  ];
  const out = [];
  for (let i = 0; i < n; i++) {
    let s = '';
    for (let k = int(1, 4); k > 0; k--) {
      s += pick(gens)();
    }
    if (rnd() < 0.02) s += anyAssigned();
    out.push(s);
  }
  return out;
}

module.exports = { randomStrings };
const [mode, ...args] = require.main === module ? process.argv.slice(2) : ['module'];
if (mode === 'module') {
  // required by hf_reference.js for the random strings
} else if (mode === 'lines') {
  const lines = fs.readFileSync(args[0], 'utf-8').split('\n');
  const outLines = lines.map((l) => JSON.stringify(encodeBoth(l)));
  fs.writeFileSync(args[1], outLines.join('\n') + '\n');
} else if (mode === 'random') {
  const strs = randomStrings(parseInt(args[0], 10), parseInt(args[1], 10), args[2]);
  const outLines = strs.map((s) => JSON.stringify(Object.assign({ s }, encodeBoth(s))));
  fs.writeFileSync(args[3], outLines.join('\n') + '\n');
} else {
  console.error('usage: reference_tokenizers.js lines IN OUT | random SEED N RANGES OUT');
  process.exit(2);
}
