# GGUF vocabularies written as llama.cpp's convert_hf_to_gguf.py lays out tokenizer.ggml.*, for
# tests/tokenizer/gguf_vocab_test.cpp and tests/cli/gguf_tokenize_test.cpp. Run with /usr/bin/python3.
#
#   gpt2 TOKENIZER_JSON PRE OUT [EDITS]  byte-level BPE vocabulary of a tokenizer.json
#   llama TOKENIZER_JSON OUT [EDITS]     SentencePiece-style BPE vocabulary of a tokenizer.json
#                                        (scores recovered from the merge ranks)
#   spm MODEL OUT                        a SentencePiece .model's pieces, scores and types
#   t5 MODEL OUT                         a Unigram .model as convert_hf_to_gguf.py's T5 path
#                                        writes it: pieces, scores, types, the normalizer flags
#                                        and precompiled_charsmap (UINT8 array)
#   bert TOKENIZER_JSON OUT              WordPiece, spelled as convert_hf_to_gguf's phantom()
#   tiny MODEL OUT [EDITS]               a small vocabulary ("gpt2" or "llama") for bad cases
#   many OUT_DIR [[MODEL, EDITS], ...]   tiny for each, written to OUT_DIR/0.gguf, 1.gguf, ...
#   train BROWN IN OUT                   trains a BPE .model on BROWN, writes SentencePiece's
#                                        ids of each IN line to OUT/spm_ids.jsonl
#   pairs OUT_DIR [[PRE, REGEX...], ...] for each list a GGUF with that pre and the tokenizer.json
#                                        declaring the same Split sequence, over a vocabulary
#                                        that merges any two common characters
#   pieces OUT PRE [TEXT, ...]           byte-level vocabulary in which each TEXT is one token
#                                        (merges build each prefix), with that pre
#   vocab OUT SPEC                       {"model", "pre", "tokens", "types", "merges"} as given
#   whitespace-json TOKENIZER_JSON OUT   that tokenizer.json with llama.cpp's "whitespace"
#                                        pipeline (no normalizer, Split \S+ Isolated)
#   ranges OUT                           assigned code points (Unicode <= 14, no surrogates or
#                                        private use) for hf_reference.js random
# EDITS is a JSON object: {"set": {key: [type, value, elem_type]}, "del": [key],
# "token_type": {index: value}, "tokens": {index: text}, "embd": dim}.
import json, struct, sys

T = dict(U8=0, I8=1, U16=2, I16=3, U32=4, I32=5, F32=6, BOOL=7, STR=8, ARR=9, U64=10, I64=11, F64=12)
PACK = {0: '<B', 1: '<b', 2: '<H', 3: '<h', 4: '<I', 5: '<i', 6: '<f', 7: '<?', 10: '<Q', 11: '<q', 12: '<d'}
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6

def s(x):
    b = x.encode('utf-8')
    return struct.pack('<Q', len(b)) + b

def kv(key, t, v, et=None):
    b = s(key) + struct.pack('<I', t)
    if t == T['STR']:
        return b + s(v)
    if t == T['ARR']:
        b += struct.pack('<IQ', et, len(v))
        if et == T['STR']:
            return b + b''.join(s(x) for x in v)
        return b + b''.join(struct.pack(PACK[et], x) for x in v)
    return b + struct.pack(PACK[t], v)

def write(path, kvs, edits):
    for k in edits.get('del', []):
        kvs.pop(k, None)
    for k, v in edits.get('set', {}).items():
        kvs[k] = tuple(v)
    for i, t in edits.get('token_type', {}).items():
        kvs['tokenizer.ggml.token_type'][1][int(i)] = t
    for i, t in edits.get('tokens', {}).items():
        kvs['tokenizer.ggml.tokens'][1][int(i)] = t
    n = len(kvs['tokenizer.ggml.tokens'][1])
    tensors = []
    dim = edits.get('embd', 0)
    if dim:  # token_embd.weight, F32, row i = [i, i + 0.5, ...]
        raw = b''.join(struct.pack('<%df' % dim, *[i + 0.5 * k for k in range(dim)]) for i in range(n))
        tensors.append(('token_embd.weight', [dim, n], 0, raw))
    body = b'GGUF' + struct.pack('<IQQ', 3, len(tensors), len(kvs))
    body += b''.join(kv(k, *v) for k, v in kvs.items())
    off = 0
    for name, ne, t, raw in tensors:
        body += s(name) + struct.pack('<I', len(ne)) + b''.join(struct.pack('<Q', x) for x in ne)
        body += struct.pack('<IQ', t, off)
        off += len(raw) + (-len(raw)) % 32
    body += b'\0' * ((-len(body)) % 32)
    for name, ne, t, raw in tensors:
        body += raw + b'\0' * ((-len(raw)) % 32)
    with open(path, 'wb') as f:
        f.write(body)

def by_id(j):
    # convert_hf_to_gguf.get_vocab_base: ids 0..max, holes as [PADn] (UNUSED), added tokens
    # CONTROL when special else USER_DEFINED.
    vocab = dict(j['model']['vocab'])
    added = {a['id']: a for a in j['added_tokens']}
    for a in added.values():
        vocab[a['content']] = a['id']
    rev = {i: t for t, i in vocab.items()}
    toks, types = [], []
    for i in range(max(rev) + 1):
        if i not in rev:
            toks.append('[PAD%d]' % i); types.append(UNUSED)
        elif i in added:
            toks.append(rev[i]); types.append(CONTROL if added[i]['special'] else USER_DEFINED)
        else:
            toks.append(rev[i]); types.append(NORMAL)
    return toks, types

def base(model, toks, types):
    return {'general.architecture': (T['STR'], 'llama'),
            'tokenizer.ggml.model': (T['STR'], model),
            'tokenizer.ggml.tokens': (T['ARR'], toks, T['STR']),
            'tokenizer.ggml.token_type': (T['ARR'], types, T['I32'])}

def special_id(j, name):
    for a in j['added_tokens']:
        if a['content'] == name:
            return a['id']
    return None

def gpt2(tok_json, pre, out, edits):
    j = json.load(open(tok_json, encoding='utf-8'))
    toks, types = by_id(j)
    kvs = base('gpt2', toks, types)
    kvs['tokenizer.ggml.pre'] = (T['STR'], pre)
    merges = [m if isinstance(m, str) else ' '.join(m) for m in j['model']['merges']]
    kvs['tokenizer.ggml.merges'] = (T['ARR'], merges, T['STR'])
    for i, t in enumerate(toks):  # as convert_hf_to_gguf marks them (raw-UTF-8 vocabularies)
        if t == '<unk>':
            types[i] = UNKNOWN
        elif len(t) == 6 and t.startswith('<0x') and t.endswith('>'):
            types[i] = BYTE
    for key, name in (('bos', '<|begin_of_text|>'), ('eos', '<|end_of_text|>'),
                      ('eos', '<|endoftext|>'), ('bos', '<bos>'), ('eos', '<eos>')):
        i = special_id(j, name)
        if i is not None:
            kvs['tokenizer.ggml.%s_token_id' % key] = (T['U32'], i)
    if 'tokenizer.ggml.bos_token_id' in kvs:
        kvs['tokenizer.ggml.add_bos_token'] = (T['BOOL'], True)
    write(out, kvs, edits)

def llama(tok_json, out, edits):
    j = json.load(open(tok_json, encoding='utf-8'))
    toks, types = by_id(j)
    scores = []
    for i, t in enumerate(toks):
        if t == '<unk>':
            types[i] = UNKNOWN
        elif len(t) == 6 and t.startswith('<0x') and t.endswith('>'):
            types[i] = BYTE
        scores.append(-1e6 - i if types[i] == NORMAL else 0.0)
    # The .model's scores, recovered from the merge list: Hugging Face's converter ranks merges
    # by the score of the piece they make, so a piece's score is minus its first merge's rank.
    # Pieces no merge makes (single characters) keep a score below every merge.
    ids = {t: i for i, t in enumerate(toks)}
    for r, m in enumerate(j['model']['merges']):
        a, b = m.split(' ') if isinstance(m, str) else m
        i = ids[a + b]
        scores[i] = max(scores[i], -float(r))
    kvs = base('llama', toks, types)
    kvs['tokenizer.ggml.scores'] = (T['ARR'], scores, T['F32'])
    kvs['tokenizer.ggml.bos_token_id'] = (T['U32'], special_id(j, '<s>'))
    kvs['tokenizer.ggml.eos_token_id'] = (T['U32'], special_id(j, '</s>'))
    kvs['tokenizer.ggml.unknown_token_id'] = (T['U32'], special_id(j, '<unk>'))
    kvs['tokenizer.ggml.add_bos_token'] = (T['BOOL'], True)
    kvs['tokenizer.ggml.add_eos_token'] = (T['BOOL'], False)
    write(out, kvs, edits)

def spm_gguf(model, out):
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=model)
    n = sp.get_piece_size()
    toks = [sp.id_to_piece(i) for i in range(n)]
    types = [UNKNOWN if sp.is_unknown(i) else CONTROL if sp.is_control(i) else
             BYTE if sp.is_byte(i) else UNUSED if sp.is_unused(i) else NORMAL for i in range(n)]
    kvs = base('llama', toks, types)
    kvs['tokenizer.ggml.scores'] = (T['ARR'], [sp.get_score(i) for i in range(n)], T['F32'])
    kvs['tokenizer.ggml.bos_token_id'] = (T['U32'], sp.bos_id())
    kvs['tokenizer.ggml.eos_token_id'] = (T['U32'], sp.eos_id())
    kvs['tokenizer.ggml.unknown_token_id'] = (T['U32'], sp.unk_id())
    write(out, kvs, {})

def normalizer_spec(model):
    # ModelProto field 3 (NormalizerSpec): 2 precompiled_charsmap, 3 add_dummy_prefix,
    # 4 remove_extra_whitespaces (protobuf by hand: Debian's sentencepiece has no _pb2 module).
    def varint(b, i):
        v = sh = 0
        while True:
            c = b[i]; i += 1; v |= (c & 0x7F) << sh; sh += 7
            if c < 0x80: return v, i
    def fields(b):
        i = 0
        while i < len(b):
            k, i = varint(b, i)
            w = k & 7
            if w == 0: v, i = varint(b, i)
            elif w == 1: v, i = None, i + 8
            elif w == 5: v, i = None, i + 4
            else:
                n, i = varint(b, i)
                v, i = b[i:i + n], i + n
            yield k >> 3, v
    spec = [v for f, v in fields(open(model, 'rb').read()) if f == 3][0]
    d = {2: b'', 3: 1, 4: 1}
    for f, v in fields(spec):
        if f in d: d[f] = v
    return d[2], bool(d[3]), bool(d[4])

def t5(model, out):
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=model)
    n = sp.get_piece_size()
    toks = [sp.id_to_piece(i) for i in range(n)]
    types = [UNKNOWN if sp.is_unknown(i) else CONTROL if sp.is_control(i) else
             BYTE if sp.is_byte(i) else UNUSED if sp.is_unused(i) else NORMAL for i in range(n)]
    charsmap, prefix, squeeze = normalizer_spec(model)
    kvs = base('t5', toks, types)
    kvs['tokenizer.ggml.scores'] = (T['ARR'], [sp.get_score(i) for i in range(n)], T['F32'])
    kvs['tokenizer.ggml.add_space_prefix'] = (T['BOOL'], prefix)
    kvs['tokenizer.ggml.remove_extra_whitespaces'] = (T['BOOL'], squeeze)
    kvs['tokenizer.ggml.precompiled_charsmap'] = (T['ARR'], list(charsmap), T['U8'])
    kvs['tokenizer.ggml.bos_token_id'] = (T['U32'], sp.bos_id())
    kvs['tokenizer.ggml.eos_token_id'] = (T['U32'], sp.eos_id())
    kvs['tokenizer.ggml.unknown_token_id'] = (T['U32'], sp.unk_id())
    write(out, kvs, {})

def bert(tok_json, out):
    j = json.load(open(tok_json, encoding='utf-8'))
    toks, types = by_id(j)
    def phantom(t):
        if t.startswith('[') and t.endswith(']'):
            return t
        if t.startswith('##'):
            return t[2:]
        return '\u2581' + t
    kvs = base('bert', [phantom(t) for t in toks], types)
    kvs['general.architecture'] = (T['STR'], 'bert')
    for key, name in (('unknown', '[UNK]'), ('cls', '[CLS]'), ('seperator', '[SEP]'),
                      ('padding', '[PAD]'), ('mask', '[MASK]')):
        kvs['tokenizer.ggml.%s_token_id' % key] = (T['U32'], special_id(j, name))
    write(out, kvs, {})

def byte_chars():
    # GPT-2's byte -> character map.
    bs = list(range(ord('!'), ord('~') + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs, k = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b); cs.append(256 + k); k += 1
    return {b: chr(c) for b, c in zip(bs, cs)}

def pieces(out, pre, texts):
    # Byte-level: the 256 byte tokens, then every prefix of each text (in the GPT-2 alphabet)
    # made by the merge (prefix, next character), so that each text is one token.
    enc = byte_chars()
    toks = [enc[b] for b in range(256)]
    have, merges = set(toks), []
    for t in texts:
        w = ''.join(enc[b] for b in t.encode('utf-8'))
        for k in range(2, len(w) + 1):
            if w[:k] not in have:
                have.add(w[:k]); toks.append(w[:k]); merges.append(w[:k - 1] + ' ' + w[k - 1])
    kvs = base('gpt2', toks, [NORMAL] * len(toks))
    kvs['tokenizer.ggml.pre'] = (T['STR'], pre)
    kvs['tokenizer.ggml.merges'] = (T['ARR'], merges, T['STR'])
    write(out, kvs, {})

def vocab(out, spec):
    # {"model", "pre", "tokens", "types" (default NORMAL; <0xXX> BYTE), "merges"} as given.
    toks = spec['tokens']
    types = spec.get('types') or [BYTE if t.startswith('<0x') else NORMAL for t in toks]
    kvs = base(spec['model'], toks, types)
    if 'pre' in spec:
        kvs['tokenizer.ggml.pre'] = (T['STR'], spec['pre'])
    if 'merges' in spec:
        kvs['tokenizer.ggml.merges'] = (T['ARR'], spec['merges'], T['STR'])
    write(out, kvs, {})

def whitespace_json(tok_json, out):
    # The tokenizer.json of llama.cpp's "whitespace" pipeline on a raw-UTF-8 vocabulary: no
    # normalizer, the runs of non-space and of space (Split \S+, Isolated), the model as it is.
    j = json.load(open(tok_json, encoding='utf-8'))
    j['normalizer'] = None
    j['pre_tokenizer'] = {'type': 'Split', 'pattern': {'Regex': '\\S+'}, 'behavior': 'Isolated',
                          'invert': False}
    j['decoder'] = {'type': 'Sequence', 'decoders': [{'type': 'ByteFallback'}, {'type': 'Fuse'}]}
    json.dump(j, open(out, 'w', encoding='utf-8'), ensure_ascii=False)

def tiny(model, out, edits):
    if model == 'gpt2':
        bs = list(range(ord('!'), ord('~') + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
        cs, k = bs[:], 0
        for b in range(256):
            if b not in bs:
                bs.append(b); cs.append(256 + k); k += 1
        toks = [chr(c) for c in cs] + ['\u0120t', '<|endoftext|>']
        types = [NORMAL] * 257 + [CONTROL]
        kvs = base('gpt2', toks, types)
        kvs['tokenizer.ggml.pre'] = (T['STR'], 'gpt-2')
        kvs['tokenizer.ggml.merges'] = (T['ARR'], ['\u0120 t'], T['STR'])
    else:
        toks = ['<unk>', '<s>', '</s>'] + ['<0x%02X>' % b for b in range(256)] + [
            '\u2581', 'a', 'b', '\u2581a', 'ab', '\u2581ab']
        types = [UNKNOWN, CONTROL, CONTROL] + [BYTE] * 256 + [NORMAL] * 6
        kvs = base('llama', toks, types)
        kvs['tokenizer.ggml.scores'] = (T['ARR'], [0.0] * 259 + [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0], T['F32'])
    write(out, kvs, edits)

def train(brown, inp, out):
    import sentencepiece as spm
    lines = [json.loads(l) for l in open(brown, encoding='utf-8') if l.strip()]
    with open(out + '/train.txt', 'w', encoding='utf-8') as f:
        f.write('\n'.join(lines) + '\n')
    spm.SentencePieceTrainer.train(input=out + '/train.txt', model_prefix=out + '/bpe',
        model_type='bpe', vocab_size=1500, character_coverage=0.9995, byte_fallback=True,
        normalization_rule_name='identity', remove_extra_whitespaces=False, add_dummy_prefix=True,
        split_by_whitespace=True, num_threads=2, minloglevel=2)
    sp = spm.SentencePieceProcessor(model_file=out + '/bpe.model')
    ins = [json.loads(l) for l in open(inp, encoding='utf-8') if l.strip()]
    with open(out + '/spm_ids.jsonl', 'w') as f:
        for ids in sp.encode(ins):
            f.write(json.dumps(ids) + '\n')

def pairs(out, regex_lists):
    # A byte-level vocabulary whose merges join any two of 70 common characters, so that the
    # ids show every split boundary; for each regex list a GGUF (pre "custom") and the
    # tokenizer.json declaring the same Split sequence: OUT/<i>.gguf, OUT/<i>.json.
    bs = list(range(ord('!'), ord('~') + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs, k = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b); cs.append(256 + k); k += 1
    enc = {b: chr(c) for b, c in zip(bs, cs)}
    chars = [enc[ord(c)] for c in 'abcdefghijklmnopqrstuvwxyzTHAIS0123456789 \n\t.,!?\'"()-:;$+<=>^~|`']
    toks = [enc[b] for b in range(256)]
    merges = []
    for a in chars:
        for b in chars:
            merges.append(a + ' ' + b); toks.append(a + b)
    vocab = {t: i for i, t in enumerate(toks)}
    for i, regexes in enumerate(regex_lists):
        kvs = base('gpt2', toks, [NORMAL] * len(toks))
        kvs['tokenizer.ggml.pre'] = (T['STR'], regexes[0])
        kvs['tokenizer.ggml.merges'] = (T['ARR'], merges, T['STR'])
        write('%s/%d.gguf' % (out, i), kvs, {})
        seq = [{'type': 'Split', 'pattern': {'Regex': r}, 'behavior': 'Isolated', 'invert': False}
               for r in regexes[1:]]
        seq.append({'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': False,
                    'use_regex': False})
        j = {'version': '1.0', 'truncation': None, 'padding': None, 'added_tokens': [],
             'normalizer': None, 'pre_tokenizer': {'type': 'Sequence', 'pretokenizers': seq},
             'post_processor': None,
             'decoder': {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': False,
                         'use_regex': False},
             'model': {'type': 'BPE', 'vocab': vocab, 'merges': merges, 'dropout': None,
                       'unk_token': None, 'byte_fallback': False}}
        json.dump(j, open('%s/%d.json' % (out, i), 'w', encoding='utf-8'), ensure_ascii=False)

def ranges(out):
    rows = []
    for line in open('/usr/share/unicode/DerivedAge.txt', encoding='utf-8'):
        line = line.split('#')[0].strip()
        if not line:
            continue
        r, age = [x.strip() for x in line.split(';')]
        if float(age) > 14.0:
            continue
        lo, hi = (r.split('..') + [r])[:2]
        lo, hi = int(lo, 16), int(hi, 16)
        if 0xD800 <= lo <= 0xDFFF or 0xE000 <= lo <= 0xF8FF or lo >= 0xF0000:
            continue
        rows.append('%X %X' % (lo, hi))
    open(out, 'w').write('\n'.join(rows) + '\n')

if __name__ == '__main__':  # hf_parity_test.cpp imports normalizer_spec
    mode, args = sys.argv[1], sys.argv[2:]
    E = lambda i: json.loads(args[i]) if len(args) > i else {}
    if mode == 'gpt2': gpt2(args[0], args[1], args[2], E(3))
    elif mode == 'llama': llama(args[0], args[1], E(2))
    elif mode == 'spm': spm_gguf(args[0], args[1])
    elif mode == 'bert': bert(args[0], args[1])
    elif mode == 't5': t5(args[0], args[1])
    elif mode == 'tiny': tiny(args[0], args[1], E(2))
    elif mode == 'many':  # OUT_DIR [[model, edits], ...] -> OUT_DIR/<i>.gguf
        for i, (model, edits) in enumerate(json.loads(args[1])):
            tiny(model, '%s/%d.gguf' % (args[0], i), edits)
    elif mode == 'train': train(args[0], args[1], args[2])
    elif mode == 'ranges': ranges(args[0])
    elif mode == 'pieces': pieces(args[0], args[1], json.loads(args[2]))
    elif mode == 'vocab': vocab(args[0], json.loads(args[1]))
    elif mode == 'whitespace-json': whitespace_json(args[0], args[1])
    elif mode == 'pairs': pairs(args[0], json.loads(args[1]))
    else: sys.exit('unknown mode ' + mode)
