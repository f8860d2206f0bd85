"""The extension exports nothing but its init function (hidden visibility: the hwy:: symbols of
src/simd/hwy_runtime.cpp and the static libraries' symbols stay local), and shares a process
with torch and faiss (Highway / OpenBLAS users)."""
import shutil
import subprocess
import sys

import pytest


def test_only_pyinit_exported(es):
    if not shutil.which("nm"):
        pytest.skip("nm not installed")
    so = es._core.__file__
    out = subprocess.run(["nm", "-D", "--defined-only", so], capture_output=True, text=True, check=True).stdout
    names = [line.split()[-1] for line in out.splitlines() if line.strip()]
    assert names == ["PyInit__embedscope"], names


def test_same_process_as_torch_and_faiss(tmp_path):
    code = (
        "import numpy as np, torch, faiss, embedscope\n"
        "W = np.random.default_rng(0).normal(size=(200, 16)).astype(np.float32)\n"
        f"np.save({str(tmp_path / 'w.npy')!r}, W)\n"
        f"kv = embedscope.load({str(tmp_path / 'w.npy')!r})\n"
        "D, I = kv.search(W[:5].copy(), 3, metric='dot')\n"
        "idx = faiss.IndexFlatIP(16); idx.add(W); Df, If = idx.search(W[:5].copy(), 3)\n"
        "T = torch.topk(torch.from_numpy(W[:5]) @ torch.from_numpy(W).T, 3).indices.numpy()\n"
        "assert (I == If).all() and (I == T).all(), (I, If, T)\n"
        "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env={**__import__("os").environ, "PYTHONPATH": ":".join(sys.path)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
