# SPDX-License-Identifier: MIT
"""PyTorch twins of fpemu's three built-in models (experiments/model.c).

A twin is a torch module whose ``state_dict()`` keys, shapes and layouts are
exactly what ``fpemu train --init`` reads (docs/replay.md), so a state saved
from it starts an fpemu run, and an fpemu run's start can be loaded into it:

    mlp-digits        nn.Sequential(Linear(64, 64), ReLU, Linear(64, 64), ReLU, Linear(64, 10))
    deep-mlp          nn.Sequential(Linear(64, 32), ReLU, 15 x (Linear(32, 32), ReLU), Linear(32, 10))
    tiny-transformer  TinyTransformer: wte, wpe, h.L.{ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc,
                      mlp.c_proj}, ln_f, lm_head (nanoGPT's names; every Linear has a bias)

Keys: the MLPs are nn.Sequential, so Linear i is module 2i: ``0.weight`` (out, in),
``0.bias`` (out,), ``2.weight``, ... exactly as the recording recipe's make_model builds
them. The MLPs take ``pixels * input_scale`` (1/16 for mlp-digits, 256 for deep-mlp).

Without torch the module still gives the key lists (``state_keys``), fpemu's own
initial parameters (``fpemu_init``), its default batch order of the digits
(``digits_order``) and the tiny-transformer's task data (``task_sequence``,
``train_batch``, ``eval_set``), all computed as the engine computes them: its
counter-based random stream is ``random64`` (SplitMix64 of seed and counter,
emu/internal.h).

    import twins                                  # python/fpemu/twins.py
    m = twins.make_model("tiny-transformer")      # needs torch
    m.load_state_dict(twins.fpemu_init_state_dict("tiny-transformer", seed=1))
"""
import math

try:  # the key lists and the data generators work without torch
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:  # pragma: no cover
    torch = None

MODELS = ("mlp-digits", "tiny-transformer", "deep-mlp")
TRAIN_ROWS = 1500  # digits rows 0..1499 train, 1500..1796 evaluate

# experiments/policy.c's defaults (trn_settings_init) that shape the models and their data
DEFAULTS = {
    "mlp-digits": dict(hidden=64, depth=2, input_scale=1 / 16, init_gain=1.0, batch_size=32, lr=3e-3),
    "deep-mlp": dict(hidden=32, depth=16, input_scale=256.0, init_gain=1.0, batch_size=32, lr=1e-3),
    "tiny-transformer": dict(d_model=32, heads=2, d_ff=64, depth=2, seq_digits=6, vocab=10, task="sum",
                             batch_size=16, lr=3e-3),
}


def settings(model, **over):
    """The engine's defaults for model, with the given keys replaced (as --set does)."""
    if model not in DEFAULTS:
        raise ValueError("unknown model %r (expected one of %s)" % (model, ", ".join(MODELS)))
    s = dict(DEFAULTS[model])
    for k, v in over.items():
        if k not in s:
            raise ValueError("%s: no setting %r (known: %s)" % (model, k, ", ".join(sorted(s))))
        s[k] = v
    return s


# ---- the engine's random stream -------------------------------------------------------

M64 = (1 << 64) - 1


def random64(seed, counter):
    """fpemu_random64(seed, counter): SplitMix64 of seed and counter (emu/internal.h emu__mix)."""
    z = (seed * 0x9E3779B97F4A7C15 + (counter + 1) * 0xD1B54A32D192ED03) & M64
    z ^= z >> 31
    z = (z * 0xBF58476D1CE4E5B9) & M64
    z ^= z >> 27
    z = (z * 0x94D049BB133111EB) & M64
    z ^= z >> 31
    z = (z + (seed ^ 0x2545F4914F6CDD1D)) & M64
    z ^= z >> 29
    z = (z * 0xBF58476D1CE4E5B9) & M64
    return z ^ (z >> 32)


def _urand(seed, i):
    return (random64(seed, i) >> 11) * 2.0 ** -53


def _nrand(seed, i):
    u1, u2 = _urand(seed, 2 * i), _urand(seed, 2 * i + 1)
    if u1 < 1e-300:
        u1 = 1e-300
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


# ---- the parameters: keys, shapes, the engine's initialisation ---------------------------

# init kinds of model.c
_UNIFORM_FANIN, _NORMAL_GAIN, _NORMAL, _ZERO, _ONE = range(5)


def _params(model, s):
    """[(key, shape, init, fan_in, std)] in the engine's order (= the twin's state_dict order)."""
    out = []
    if model in ("mlp-digits", "deep-mlp"):
        nlin = s["depth"] + 1
        dims = [64] + [s["hidden"]] * (nlin - 1) + [10]
        deep = model == "deep-mlp"
        for i in range(nlin):
            fi, fo = dims[i], dims[i + 1]
            out.append(("%d.weight" % (2 * i), (fo, fi), _NORMAL_GAIN if deep else _UNIFORM_FANIN, fi, s["init_gain"]))
            out.append(("%d.bias" % (2 * i), (fo,), _ZERO if deep else _UNIFORM_FANIN, fi, 0.0))
        return out
    C, FF, V, T = s["d_model"], s["d_ff"], s["vocab"] + 1, 2 * s["seq_digits"]
    out.append(("wte.weight", (V, C), _NORMAL, C, 0.1))
    out.append(("wpe.weight", (T, C), _NORMAL, C, 0.1))
    for l in range(s["depth"]):
        h = "h.%d." % l
        out += [(h + "ln_1.weight", (C,), _ONE, C, 0.0), (h + "ln_1.bias", (C,), _ZERO, C, 0.0),
                (h + "attn.c_attn.weight", (3 * C, C), _UNIFORM_FANIN, C, 0.0), (h + "attn.c_attn.bias", (3 * C,), _ZERO, C, 0.0),
                (h + "attn.c_proj.weight", (C, C), _UNIFORM_FANIN, C, 0.0), (h + "attn.c_proj.bias", (C,), _ZERO, C, 0.0),
                (h + "ln_2.weight", (C,), _ONE, C, 0.0), (h + "ln_2.bias", (C,), _ZERO, C, 0.0),
                (h + "mlp.c_fc.weight", (FF, C), _UNIFORM_FANIN, C, 0.0), (h + "mlp.c_fc.bias", (FF,), _ZERO, C, 0.0),
                (h + "mlp.c_proj.weight", (C, FF), _UNIFORM_FANIN, FF, 0.0), (h + "mlp.c_proj.bias", (C,), _ZERO, FF, 0.0)]
    out += [("ln_f.weight", (C,), _ONE, C, 0.0), ("ln_f.bias", (C,), _ZERO, C, 0.0),
            ("lm_head.weight", (V, C), _UNIFORM_FANIN, C, 0.0), ("lm_head.bias", (V,), _ZERO, C, 0.0)]
    return out


def state_keys(model, **over):
    """[(key, shape)]: the state_dict of model's twin, in order, as --init expects it."""
    return [(k, shape) for k, shape, *_ in _params(model, settings(model, **over))]


def fpemu_init(model, seed=1, **over):
    """The engine's initial parameters for (model, seed, settings), before their rounding to the
    policy's parameter format: {key: (shape, [float, ...] in C order)} (model.c, trn__model_init_params).
    Uniform draws are exact; the normal ones use the platform's log and cos, as the C code does."""
    s = settings(model, **over)
    iseed = random64(seed, 0x494E4954)  # "INIT"
    out, off = {}, 0
    for key, shape, init, fan_in, std in _params(model, s):
        n = 1
        for d in shape:
            n *= d
        bound = 1.0 / math.sqrt(fan_in)
        vals = []
        for i in range(n):
            k = off + i
            if init == _UNIFORM_FANIN:
                vals.append((2.0 * _urand(iseed, k) - 1.0) * bound)
            elif init == _NORMAL_GAIN:
                vals.append(_nrand(iseed, k) * std * bound)
            elif init == _NORMAL:
                vals.append(_nrand(iseed, k) * std)
            else:
                vals.append(1.0 if init == _ONE else 0.0)
        out[key] = (shape, vals)
        off += n
    return out


# ---- the data ---------------------------------------------------------------------------

def digits_order(seed, steps, batch_size=32):
    """The training rows fpemu takes without --order: a Fisher-Yates shuffle of rows 0..1499 per
    epoch from the seed's stream (model.c mlp_batch); steps * batch_size indices, as --order reads them."""
    dseed = random64(seed, 0x44415441)  # "DATA"
    out, perm, epoch = [], None, -1
    for pos in range(steps * batch_size):
        e = pos // TRAIN_ROWS
        if e != epoch:
            perm = list(range(TRAIN_ROWS))
            for i in range(TRAIN_ROWS - 1, 0, -1):
                j = random64(dseed, e * TRAIN_ROWS + i) % (i + 1)
                perm[i], perm[j] = perm[j], perm[i]
            epoch = e
        out.append(perm[pos % TRAIN_ROWS])
    return out


def task_sequence(task, seq_digits, vocab, seed, idx):
    """Sequence idx of the tiny-transformer's task (model.c tf_make_seq): (tokens, targets), each of
    length 2 * seq_digits; targets are -1 where the loss does not look (ignore_index=-1)."""
    n, T, sep = seq_digits, 2 * seq_digits, vocab
    a = [random64(seed, idx * n + j) % vocab for j in range(n)]
    if task == "copy":
        b = list(a)
    elif task == "sum":
        b, acc = [], 0
        for x in a:
            acc = (acc + x) % vocab
            b.append(acc)
    elif task == "reverse":
        b = a[::-1]
    else:
        raise ValueError("unknown task %r (reverse, copy, sum)" % task)
    tok = a + [sep] + b[:-1]
    tgt = [-1] * n + b
    assert len(tok) == T and len(tgt) == T
    return tok, tgt


def train_batch(step, seed=1, **over):
    """Training batch `step` (0-based) of the tiny-transformer: ([tokens] * B, [targets] * B)."""
    s = settings("tiny-transformer", **over)
    dseed, B = random64(seed, 0x44415441), s["batch_size"]
    seqs = [task_sequence(s["task"], s["seq_digits"], s["vocab"], dseed, step * B + b) for b in range(B)]
    return [t for t, _ in seqs], [g for _, g in seqs]


def eval_set(**over):
    """The tiny-transformer's fixed evaluation set: 256 sequences from a fixed seed, for every run seed."""
    s = settings("tiny-transformer", **over)
    seqs = [task_sequence(s["task"], s["seq_digits"], s["vocab"], 0x4556414C, i) for i in range(256)]
    return [t for t, _ in seqs], [g for _, g in seqs]


# ---- the torch modules -------------------------------------------------------------------

if torch is not None:

    class CausalSelfAttention(nn.Module):
        """c_attn (3C x C: rows 0..C-1 the queries, C..2C-1 the keys, 2C..3C-1 the values, each split
        into heads of C/heads in order), scores (q k^T) * 1/sqrt(C/heads), causal softmax, att v, c_proj."""

        def __init__(self, C, heads):
            super().__init__()
            self.c_attn = nn.Linear(C, 3 * C)
            self.c_proj = nn.Linear(C, C)
            self.heads = heads

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.c_attn(x).split(C, dim=2)
            hs = C // self.heads
            q = q.view(B, T, self.heads, hs).transpose(1, 2)
            k = k.view(B, T, self.heads, hs).transpose(1, 2)
            v = v.view(B, T, self.heads, hs).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
            mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
            att = att.masked_fill(~mask, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

    class MLP(nn.Module):
        def __init__(self, C, FF):
            super().__init__()
            self.c_fc = nn.Linear(C, FF)
            self.gelu = nn.GELU()  # the exact (erf) form, layers.c
            self.c_proj = nn.Linear(FF, C)

        def forward(self, x):
            return self.c_proj(self.gelu(self.c_fc(x)))

    class Block(nn.Module):
        """Pre-LN: x + attn(ln_1(x)), then + mlp(ln_2(.)); LayerNorm eps 1e-5."""

        def __init__(self, C, heads, FF):
            super().__init__()
            self.ln_1 = nn.LayerNorm(C)
            self.attn = CausalSelfAttention(C, heads)
            self.ln_2 = nn.LayerNorm(C)
            self.mlp = MLP(C, FF)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class TinyTransformer(nn.Module):
        """model.c's tiny-transformer: token and learned position embeddings (added), depth pre-LN
        blocks, a final LayerNorm and a Linear head with a bias (not tied to wte). forward(tokens)
        gives the logits; loss(tokens, targets) the mean cross-entropy over targets >= 0."""

        def __init__(self, vocab=10, seq_digits=6, d_model=32, heads=2, d_ff=64, depth=2):
            super().__init__()
            V, T = vocab + 1, 2 * seq_digits  # + the separator
            self.wte = nn.Embedding(V, d_model)
            self.wpe = nn.Embedding(T, d_model)
            self.h = nn.ModuleList([Block(d_model, heads, d_ff) for _ in range(depth)])
            self.ln_f = nn.LayerNorm(d_model)
            self.lm_head = nn.Linear(d_model, V)

        def forward(self, tok):
            T = tok.shape[1]
            x = self.wte(tok) + self.wpe(torch.arange(T, device=tok.device))
            for b in self.h:
                x = b(x)
            return self.lm_head(self.ln_f(x))

        def loss(self, tok, tgt):
            logits = self(tok)
            return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), tgt.view(-1), ignore_index=-1)


def make_model(model, **over):
    """The twin of model (torch needed), with torch's own initialisation: load a state into it
    (load_state_dict) to start where an fpemu run starts, or save its state_dict for --init."""
    if torch is None:
        raise ImportError("twins.make_model needs torch")
    s = settings(model, **over)
    if model in ("mlp-digits", "deep-mlp"):
        nlin = s["depth"] + 1
        dims = [64] + [s["hidden"]] * (nlin - 1) + [10]
        layers = []
        for i in range(nlin):
            layers.append(nn.Linear(dims[i], dims[i + 1]))
            if i < nlin - 1:
                layers.append(nn.ReLU())
        return nn.Sequential(*layers)
    return TinyTransformer(vocab=s["vocab"], seq_digits=s["seq_digits"], d_model=s["d_model"], heads=s["heads"],
                           d_ff=s["d_ff"], depth=s["depth"])


def fpemu_init_state_dict(model, seed=1, dtype=None, **over):
    """fpemu_init as a state_dict of tensors (torch needed; f32 unless dtype is given: the engine
    rounds to the policy's parameter format, f32 for the mixed policies)."""
    if torch is None:
        raise ImportError("twins.fpemu_init_state_dict needs torch")
    return {k: torch.tensor(v, dtype=torch.float64).reshape(shape).to(dtype or torch.float32)
            for k, (shape, v) in fpemu_init(model, seed, **over).items()}


def check_keys(module, model, **over):
    """Raise if module's state_dict does not have exactly the keys and shapes --init expects."""
    want = state_keys(model, **over)
    got = [(k, tuple(v.shape)) for k, v in module.state_dict().items()]
    if got != [(k, tuple(s)) for k, s in want]:
        raise AssertionError("state_dict keys/shapes differ from fpemu's:\n  got  %s\n  want %s" % (got, want))
