# Generator for bench/bench_info.sh: a GPT-2-sized model (50257 x 768 F32 wte, 1024 x 768 wpe and
# 12 transformer layers with GPT-2's tensor names and shapes, ~124M parameters) written twice:
# as a Hugging Face folder with model.safetensors (spec-following writer) and as one with
# pytorch_model.bin (torch.save, tied lm_head like older transformers checkpoints); plus the wte
# alone as wte.safetensors, wte.npy and wte.pt for the single-matrix comparisons.
#   /usr/bin/python3 bench/gen_info_bench.py OUT_DIR
import collections, json, os, struct, sys
import numpy as np
import torch

out = sys.argv[1]
n, dim, layers = 50257, 768, 12
rng = np.random.default_rng(0)
def rand(*shape):
    return (rng.standard_normal(shape, dtype=np.float32) * 0.02)
wte = rand(n, dim)
sd = collections.OrderedDict()
sd['transformer.wte.weight'] = wte
sd['transformer.wpe.weight'] = rand(1024, dim)
for i in range(layers):
    p = 'transformer.h.%d.' % i
    for k, s in [('ln_1.weight', (dim,)), ('ln_1.bias', (dim,)), ('attn.c_attn.weight', (dim, 3 * dim)),
                 ('attn.c_attn.bias', (3 * dim,)), ('attn.c_proj.weight', (dim, dim)), ('attn.c_proj.bias', (dim,)),
                 ('ln_2.weight', (dim,)), ('ln_2.bias', (dim,)), ('mlp.c_fc.weight', (dim, 4 * dim)),
                 ('mlp.c_fc.bias', (4 * dim,)), ('mlp.c_proj.weight', (4 * dim, dim)), ('mlp.c_proj.bias', (dim,))]:
        sd[p + k] = rand(*s)
sd['transformer.ln_f.weight'] = np.ones(dim, np.float32)
sd['transformer.ln_f.bias'] = np.zeros(dim, np.float32)

def write_st(path, tensors):
    header, off = {}, 0
    for k, a in tensors.items():
        header[k] = {'dtype': 'F32', 'shape': list(a.shape), 'data_offsets': [off, off + a.nbytes]}
        off += a.nbytes
    h = json.dumps(header).encode()
    h += b' ' * (-len(h) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h)) + h)
        for a in tensors.values():
            f.write(a.tobytes())

config = {'model_type': 'gpt2', 'architectures': ['GPT2LMHeadModel'], 'n_embd': dim, 'n_layer': layers,
          'n_head': 12, 'n_positions': 1024, 'vocab_size': n, 'initializer_range': 0.02}
for sub in ['st', 'bin']:
    os.makedirs(os.path.join(out, sub), exist_ok=True)
    json.dump(config, open(os.path.join(out, sub, 'config.json'), 'w'))
write_st(os.path.join(out, 'st', 'model.safetensors'), sd)
tsd = collections.OrderedDict((k, torch.from_numpy(v)) for k, v in sd.items())
tsd['lm_head.weight'] = tsd['transformer.wte.weight']
torch.save(tsd, os.path.join(out, 'bin', 'pytorch_model.bin'))
write_st(os.path.join(out, 'wte.safetensors'), {'transformer.wte.weight': wte})
np.save(os.path.join(out, 'wte.npy'), wte)
torch.save({'wte': torch.from_numpy(wte)}, os.path.join(out, 'wte.pt'))
