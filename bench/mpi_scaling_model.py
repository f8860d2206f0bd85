#!/usr/bin/python3
"""Scaling model on paper for `mpirun embedscope train` (docs/distributed.md "Model").

Per epoch and node, with P nodes, W corpus words an epoch, R words/s per node (measured at dim
100 by bench/mpi_bench.py, scaled by 100 / dim), s = --sync-every (words per node between hot syncs), H = --sync-rows:
  compute     W / (P R)
  hot syncs   W / (P s) of them, each an Allreduce of B_hot = 2 H dim 4 bytes (input + output rows);
              with sync tiers (the default) every 8^t-th of them widens to the 8^t H hottest rows
              (the widest tier: all V), so a sync costs sum_t Allreduce(B_t) / 8^t on average
  full sync   one Allreduce of B_all = 2 V dim 4 bytes at the epoch end
  Allreduce   min(ring, recursive doubling):
                ring: 2 (P-1)/P B / bw + 2 (P-1) alpha;  doubling: log2(P) (alpha + B / bw)
  efficiency  compute / (compute + hot syncs + full sync)     (syncs block training; no overlap)
Prints a markdown table for 8, 32 and 128 nodes at 10 and 100 Gb/s for GPT-2-sized (50,257 x 768)
and 1M x 300 tables.

  /usr/bin/python3 bench/mpi_scaling_model.py --rate 1.0e6 --sync-every 32768 262144
  /usr/bin/python3 bench/mpi_scaling_model.py --no-tiers     # --no-sync-tiers runs
"""
import argparse, math

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--rate", type=float, default=1.0e6, help="words/s of one node (measured)")
ap.add_argument("--rate-dim", type=int, default=100,
                help="the dim --rate was measured at: the rate scales as rate_dim / dim (the inner loops are linear in dim)")
ap.add_argument("--node-scale", type=float, nargs="+", default=[1, 16],
                help="node sizes as multiples of the measured node (1 = this 2-core box)")
ap.add_argument("--words", type=float, default=10e9, help="corpus words per epoch")
ap.add_argument("--sync-every", type=int, nargs="+", default=[32768, 262144, 1 << 21])
ap.add_argument("--sync-rows", type=int, default=1024)
ap.add_argument("--no-tiers", action="store_true", help="model --no-sync-tiers (hot rows only)")
ap.add_argument("--alpha-us", type=float, default=20.0, help="per-message latency (TCP ~20-50 us, RDMA ~2)")
a = ap.parse_args()

tables = [("GPT-2 50,257 x 768", 50257, 768), ("1M x 300", 1_000_000, 300)]


def allreduce(B, P, bw, alpha):
    ring = 2 * (P - 1) / P * B / bw + 2 * (P - 1) * alpha
    doubling = math.log2(P) * (alpha + B / bw)
    return min(ring, doubling)


def sync_time(V, dim, P, bw, alpha):
    """Mean time of one sync between epoch ends (tiers widen every 8th, 64th, ... sync)."""
    t, rows, every = 0.0, a.sync_rows, 1
    while True:
        t += allreduce(2 * min(rows, V) * dim * 4, P, bw, alpha) / every
        if a.no_tiers or rows >= V:
            return t
        rows, every = rows * 8, every * 8


print("| table | node (x measured) | --sync-every | link | B_hot MB | B_all MB | 8 nodes | 32 nodes | 128 nodes | limit |")
print("|---|---|---|---|---|---|---|---|---|---|")
for name, V, dim in tables:
    b_hot = 2 * min(a.sync_rows, V) * dim * 4
    b_all = 2 * V * dim * 4
    for scale in a.node_scale:
        R = a.rate * scale * a.rate_dim / dim
        for s in a.sync_every:
            for gbps in (10, 100):
                bw = gbps * 1e9 / 8
                effs, limit = [], ""
                for P in (8, 32, 128):
                    compute = a.words / (P * R)
                    hot = a.words / (P * s) * sync_time(V, dim, P, bw, a.alpha_us * 1e-6)
                    full = allreduce(b_all, P, bw, a.alpha_us * 1e-6)
                    effs.append(compute / (compute + hot + full))
                    limit = "hot syncs" if hot > full else "epoch-end sync"
                print(f"| {name} | {scale:g} | {s} | {gbps} Gb/s | {b_hot / 1e6:.2f} | {b_all / 1e6:.0f} | "
                      + " | ".join(f"{e:.2f}" for e in effs) + f" | {limit} |")
