#!/usr/bin/python3
"""Side by side: gensim KeyedVectors.load_word2vec_format vs embedscope's word2vec readers on the
same files (text written with numpy's shortest float32 repr, as gensim writes; and binary).

    /usr/bin/python3 bench/compare_word2vec.py [BUILD_DIR] [ROWS] [DIM]

Prints a Markdown table (median of 3 runs each, wall time, file in page cache).
"""
import json, os, subprocess, sys, tempfile, time

import numpy as np
from gensim.models import KeyedVectors

build = sys.argv[1] if len(sys.argv) > 1 else 'build'
rows = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
dim = int(sys.argv[3]) if len(sys.argv) > 3 else 300
tmp = tempfile.mkdtemp(prefix='es-w2v-compare-')
rng = np.random.default_rng(0)
kv = KeyedVectors(vector_size=dim)
kv.add_vectors(['w%d' % i for i in range(rows)],
               (rng.standard_normal((rows, dim)) * 0.3).astype(np.float32))
paths = {'text': os.path.join(tmp, 'v.txt'), 'binary': os.path.join(tmp, 'v.bin')}
kv.save_word2vec_format(paths['text'], binary=False)
kv.save_word2vec_format(paths['binary'], binary=True)

print(f'| file ({rows} x {dim}) | MB | gensim 4.2 load_word2vec_format | embedscope 1 thread | embedscope 2 threads |')
print('|---|---|---|---|---|')
for kind, path in paths.items():
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        KeyedVectors.load_word2vec_format(path, binary=(kind == 'binary'))
        times.append(time.perf_counter() - t0)
    gensim_ms = sorted(times)[1] * 1e3
    out = subprocess.run([os.path.join(build, 'bin', 'word2vec_bench'), '--benchmark_filter=BM_LoadFile',
                          '--benchmark_repetitions=3', '--benchmark_report_aggregates_only=true',
                          '--benchmark_format=json'],
                         env=dict(os.environ, ES_W2V_FILE=path), check=True, capture_output=True,
                         text=True).stdout
    med = {b['run_name']: b['real_time'] for b in json.loads(out)['benchmarks']
           if b.get('aggregate_name') == 'median'}
    ours = [med.get('BM_LoadFile/1/process_time/real_time'), med.get('BM_LoadFile/2/process_time/real_time')]
    mb = os.path.getsize(path) / 1e6
    fmt = lambda v: '%.0f ms' % v if v is not None else 'n/a'
    print(f'| {kind} | {mb:.0f} | {gensim_ms:.0f} ms | {fmt(ours[0])} | {fmt(ours[1])} |')
for p in paths.values():
    os.remove(p)
os.rmdir(tmp)
