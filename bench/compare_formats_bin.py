#!/usr/bin/python3
"""Side by side: loading a 50257 x 768 float32 matrix (GPT-2 wte) from .npy and .safetensors,
embedscope (bench/formats_bin_bench.cpp) vs numpy.load, with the files in page cache.

Usage: /usr/bin/python3 bench/compare_formats_bin.py BUILD_DIR
Prints a Markdown table for bench/RESULTS.md (## formats: safetensors and npy loading).
"""
import json, os, statistics, subprocess, sys, tempfile, time

import numpy as np

build = sys.argv[1] if len(sys.argv) > 1 else 'build'
tmp = os.environ.get('TMPDIR', '/tmp') + '/embedscope_formats_bin_bench'
os.makedirs(tmp, exist_ok=True)
a = np.random.default_rng(1).normal(0, 0.02, (50257, 768)).astype('<f4')
npy = os.path.join(tmp, 'peer_wte.npy')
np.save(npy, a)


def med_ms(fn, n=15):
    fn()  # warm the page cache
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t) * 1e3)
    return statistics.median(ts)


rows = [
    ('numpy.load (read into memory)', med_ms(lambda: np.load(npy))),
    ('numpy.load(mmap_mode="r")', med_ms(lambda: np.load(npy, mmap_mode='r'))),
    ('numpy.load + row norms', med_ms(lambda: np.linalg.norm(np.load(npy), axis=1))),
]
out = subprocess.run([os.path.join(build, 'bin', 'formats_bin_bench'), '--benchmark_format=json',
                      '--benchmark_repetitions=5', '--benchmark_report_aggregates_only=true'],
                     check=True, capture_output=True, text=True).stdout
for b in json.loads(out)['benchmarks']:
    if b.get('aggregate_name') == 'median':
        rows.append(('embedscope ' + b['run_name'].replace('BM_', ''), b['real_time']))
print('| operation (50257 x 768 F32, page cache) | median ms |')
print('|---|---|')
for name, ms in rows:
    print('| %s | %.2f |' % (name, ms))
