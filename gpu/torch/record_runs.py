# SPDX-License-Identifier: MIT
"""Record real training runs on a CUDA GPU, for `fpemu compare` (gpu/torch/README.md).

For each model and policy: the initial state (init.npz, keyed like python/fpemu/twins.py),
the batch order (order.npy, int32) and one trace per AdamW form (POLICY-foreach0.csv,
POLICY-foreach1.csv: the "fpemu-trace 1" CSV: step,loss,scale,skipped,grad_norm, every f32
written with repr so it reads back bit for bit, and the final eval loss and accuracy).

Policies: 32-true (TF32 off), 16-mixed (torch.autocast float16 + GradScaler), bf16-mixed
(torch.autocast bfloat16), fp8-current (an fp8 Linear through torch._scaled_mm: per-tensor
current scaling, e4m3 activations and weights, e5m2 gradients; see Fp8LinearFn).

Needs PyTorch with CUDA and NumPy; no network. Run from the repository root:

    OUT=/path/to/out python3 gpu/torch/record_runs.py [--models mlp-digits,deep-mlp] [--reps 2]

Writes OUT/env.json and OUT/MODEL/{init.npz, order.npy, POLICY-foreach{0,1}.csv}.
"""
import argparse
import datetime
import gzip
import importlib.util
import json
import math
import os
import sys
import time
import traceback

# cuBLAS is deterministic only with a fixed workspace (before CUDA starts)
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def load_twins():
    """python/fpemu/twins.py, loaded by path (the fpemu package itself is not needed)."""
    spec = importlib.util.spec_from_file_location("fpemu_twins", os.path.join(ROOT, "python", "fpemu", "twins.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


twins = load_twins()

# model -> steps, lr, batch, input scale (the earlier recording's recipe for the MLPs)
RUNS = {
    "mlp-digits": dict(steps=300, lr=3e-3, batch=32, input_scale=1 / 16),
    "deep-mlp": dict(steps=200, lr=1e-3, batch=32, input_scale=256.0),
    "tiny-transformer": dict(steps=300, lr=3e-3, batch=16, input_scale=None),
}
POLICIES = ("32-true", "16-mixed", "bf16-mixed", "fp8-current")
AMP = {"16-mixed": torch.float16, "bf16-mixed": torch.bfloat16, "fp8-current": torch.bfloat16}
E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2
E4M3_MAX, E5M2_MAX = 448.0, 57344.0
dev = "cuda"


# ---- fp8: torch._scaled_mm with per-tensor current scaling ------------------------------------

def f8_scale(t, fmax):
    """torchao's amax_to_scale: fmax / max(amax, 1e-12), divided in f64, rounded to f32."""
    amax = t.detach().abs().max().to(torch.float64)
    return (fmax / torch.clamp(amax, min=1e-12)).to(torch.float32)


def f8_cast(t, scale, dtype, fmax):
    """(t in f32 * scale), saturated to +-fmax, then cast (round to nearest even)."""
    return (t.float() * scale).clamp(-fmax, fmax).to(dtype)


def pad16(t):
    """Zero-pad a 2-d tensor to multiples of 16 in both dimensions (_scaled_mm's rule); zeros
    change neither an amax nor a sum."""
    r, c = t.shape
    R, C = -(-r // 16) * 16, -(-c // 16) * 16
    if (R, C) == (r, c):
        return t
    out = torch.zeros(R, C, dtype=t.dtype, device=t.device)
    out[:r, :c] = t
    return out


def scaled_mm(a8, b8_t, sa, sb, fast):
    """a8 (M x K) @ b8_t.T, b8_t being (N x K): f32 output, M x N, of the unpadded sizes.
    _scaled_mm wants a row-major, b column-major: b = b8_t.t() of a contiguous b8_t is that."""
    M, N = a8.shape[0], b8_t.shape[0]
    A = pad16(a8.view(torch.uint8)).view(a8.dtype).contiguous()
    B = pad16(b8_t.view(torch.uint8)).view(b8_t.dtype).contiguous()
    out = torch._scaled_mm(A, B.t(), scale_a=sa.reciprocal(), scale_b=sb.reciprocal(), out_dtype=torch.float32,
                           use_fast_accum=fast)
    return out[:M, :N]


class Fp8LinearFn(torch.autograd.Function):
    """y = x W^T + b with the GEMMs in fp8 (the recipe recorded as policy fp8-current):
    forward: x to the autocast type (bf16), x and W (f32 master) each cast to e4m3 with their own
    current per-tensor scale; y = _scaled_mm(x8, W8, 1/sx, 1/sw, out f32, use_fast_accum=True)
    + b (f32), rounded once to bf16.
    backward: dy (bf16) cast to e5m2 with its own scale; dx = _scaled_mm(dy8, W8^T) and
    dW = _scaled_mm(dy8^T, x8), both use_fast_accum=False, f32 out (dx then to bf16, dW kept
    f32 for the f32 master weight); db = sum of dy over the rows in f32."""

    @staticmethod
    def forward(ctx, x, w, b):
        lo = torch.bfloat16
        with torch.autocast("cuda", enabled=False):  # every cast here is explicit
            x = x.to(lo)
            sx, sw = f8_scale(x, E4M3_MAX), f8_scale(w, E4M3_MAX)
            x8, w8 = f8_cast(x, sx, E4M3, E4M3_MAX), f8_cast(w, sw, E4M3, E4M3_MAX)
            y = scaled_mm(x8, w8, sx, sw, fast=True)
            y = (y + b.float()).to(lo)
        ctx.save_for_backward(x8, w8, sx, sw)
        return y

    @staticmethod
    def backward(ctx, dy):
        x8, w8, sx, sw = ctx.saved_tensors
        with torch.autocast("cuda", enabled=False):
            sg = f8_scale(dy, E5M2_MAX)
            g8 = f8_cast(dy, sg, E5M2, E5M2_MAX)
            dx = None
            if ctx.needs_input_grad[0]:  # (M x N)(N x K); autograd casts it to x's dtype
                dx = scaled_mm(g8, w8.t().contiguous(), sg, sw, fast=False).to(torch.bfloat16)
            dw = scaled_mm(g8.t().contiguous(), x8.t().contiguous(), sg, sx, fast=False)  # (N x M)(M x K)
            db = dy.float().sum(0)
        return dx, dw, db


class Fp8Linear(torch.nn.Linear):
    """nn.Linear whose forward is Fp8LinearFn (same parameters, same state_dict keys)."""

    def forward(self, x):
        shape = x.shape
        y = Fp8LinearFn.apply(x.reshape(-1, shape[-1]), self.weight, self.bias)
        return y.reshape(*shape[:-1], y.shape[-1])


def to_fp8(module):
    """Every nn.Linear of module becomes an Fp8Linear sharing its parameters (the head too, as
    fpemu's fp8_head=1)."""
    for name, child in list(module.named_children()):
        if type(child) is torch.nn.Linear:
            f = Fp8Linear(child.in_features, child.out_features, device=child.weight.device)
            f.weight, f.bias = child.weight, child.bias
            setattr(module, name, f)
        else:
            to_fp8(child)
    return module


# ---- data, models, initial states -------------------------------------------------------------

def digits():
    path = os.environ.get("DIGITS", os.path.join(ROOT, "experiments", "data", "digits.csv.gz"))
    with gzip.open(path, "rt") as f:
        rows = np.array([[int(v) for v in line.split(",")] for line in f if line.strip()], dtype=np.int64)
    if rows.shape != (1797, 65):
        raise SystemExit("%s: expected 1797 rows of 65 fields, got %s" % (path, rows.shape))
    return rows[:, :64].astype(np.float32), rows[:, 64]


def initial_state(model, how, seed):
    """{key: f32 numpy array} in the twin's keys. how: 'torch' (the earlier recipe: PyTorch's
    default init, deep-mlp weights N(0, 2/fan_in) and zero biases, torch seed 1) or 'fpemu' (the
    engine's own initial parameters for the seed, twins.fpemu_init)."""
    if how == "fpemu":
        return {k: np.asarray(v, dtype=np.float64).astype(np.float32).reshape(shape)
                for k, (shape, v) in twins.fpemu_init(model, seed).items()}
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    m = twins.make_model(model)
    if model == "deep-mlp":
        with torch.no_grad():
            for mod in m:
                if isinstance(mod, torch.nn.Linear):
                    mod.weight.normal_(0.0, math.sqrt(2.0) / math.sqrt(mod.in_features), generator=g)
                    mod.bias.zero_()
    twins.check_keys(m, model)
    return {k: v.detach().cpu().numpy().astype(np.float32).copy() for k, v in m.state_dict().items()}


def f32(x):
    """A python float holding an f32 value, written with repr (round-trips exactly)."""
    return repr(float(x))


def write_trace(path, meta, rec):
    lines = ["# fpemu-trace 1"] + ["# %s: %s" % kv for kv in meta]
    lines.append("# eval_loss: %s" % f32(rec["eval_loss"]))
    lines.append("# eval_accuracy: %s" % f32(rec["eval_acc"]))
    lines.append("step,loss,scale,skipped,grad_norm")
    for i in range(len(rec["loss"])):
        lines.append("%d,%s,%s,%d,%s" % (i + 1, f32(rec["loss"][i]), f32(rec["scale"][i]), rec["skipped"][i], f32(rec["grad_norm"][i])))
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(path + ".tmp", path)


# ---- one run ---------------------------------------------------------------------------------------

def run(model, policy, foreach, state, data, cfg):
    dt = AMP.get(policy)
    m = twins.make_model(model).to(dev)
    m.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
    if policy == "fp8-current":
        to_fp8(m)
    opt = torch.optim.AdamW(m.parameters(), lr=cfg["lr"], betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01,
                            foreach=foreach, fused=False)
    scaler = torch.amp.GradScaler("cuda", enabled=policy == "16-mixed")  # init_scale 65536, growth_interval 2000
    rec = {"loss": [], "scale": [], "skipped": [], "grad_norm": []}

    def loss_of(batch):
        with torch.autocast("cuda", dtype=dt or torch.float32, enabled=dt is not None):
            if model == "tiny-transformer":
                tok, tgt = batch
                logits = m(tok)
                return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), tgt.view(-1), ignore_index=-1), logits
            xb, yb = batch
            out = m(xb)
            return F.cross_entropy(out.float(), yb), out

    for s in range(cfg["steps"]):
        batch = data["batch"](s)
        opt.zero_grad(set_to_none=True)
        loss, _ = loss_of(batch)
        sc = scaler.get_scale() if scaler.is_enabled() else 1.0
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        gn = torch.sqrt(sum((p.grad.float() ** 2).sum() for p in m.parameters() if p.grad is not None))
        if scaler.is_enabled():  # the step is skipped iff unscale_ found an inf or NaN
            skipped = int(sum(v.item() for v in scaler._found_inf_per_device(opt).values()) > 0)
        else:
            skipped = 0
        scaler.step(opt)
        scaler.update()
        rec["loss"].append(loss.item())
        rec["scale"].append(float(sc))
        rec["skipped"].append(skipped)
        rec["grad_norm"].append(gn.item())
    with torch.no_grad():
        loss, logits = loss_of(data["eval"])
        rec["eval_loss"] = loss.item()
        if model == "tiny-transformer":
            tgt = data["eval"][1]
            keep = tgt >= 0
            rec["eval_acc"] = (logits.argmax(-1)[keep] == tgt[keep]).float().mean().item()
        else:
            rec["eval_acc"] = (logits.float().argmax(1) == data["eval"][1]).float().mean().item()
    return rec


def model_data(model, cfg, seed, X, y, out_dir):
    """The batches (and, for the MLPs, the order written to order.npy)."""
    if model == "tiny-transformer":
        def batch(s):
            tok, tgt = twins.train_batch(s, seed=seed)
            return torch.tensor(tok, device=dev), torch.tensor(tgt, device=dev)
        et, eg = twins.eval_set()
        return {"batch": batch, "eval": (torch.tensor(et, device=dev), torch.tensor(eg, device=dev))}, None
    B, steps = cfg["batch"], cfg["steps"]
    rs = np.random.default_rng(seed)
    order = np.concatenate([rs.permutation(1500) for _ in range(steps * B // 1500 + 1)])[: steps * B].astype(np.int32)
    np.save(os.path.join(out_dir, "order.npy"), order)
    Xtr = torch.from_numpy(X[:1500] * np.float32(cfg["input_scale"])).to(dev)
    ytr = torch.from_numpy(y[:1500]).to(dev)
    Xev = torch.from_numpy(X[1500:] * np.float32(cfg["input_scale"])).to(dev)
    yev = torch.from_numpy(y[1500:]).to(dev)
    ordt = torch.from_numpy(order.astype(np.int64)).to(dev)

    def batch(s):
        idx = ordt[s * B:(s + 1) * B]
        return Xtr[idx], ytr[idx]
    return {"batch": batch, "eval": (Xev, yev)}, order


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="mlp-digits,deep-mlp")
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--init", choices=("torch", "fpemu"), default="torch")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--reps", type=int, default=2, help="runs of each configuration (the traces are rep 0; the rest check determinism)")
    a = ap.parse_args()
    out = os.environ.get("OUT", "out")
    os.makedirs(out, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False  # PyTorch's default too; 32-true means no TF32
    torch.backends.cudnn.allow_tf32 = False
    torch.use_deterministic_algorithms(True, warn_only=True)
    env = {"torch": torch.__version__, "cuda": torch.version.cuda, "device": torch.cuda.get_device_name(0),
           "capability": list(torch.cuda.get_device_capability(0)), "numpy": np.__version__,
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "allow_fp16_reduced_precision_reduction": torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
           "allow_bf16_reduced_precision_reduction": torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
           "init": a.init, "seed": a.seed, "runs": {}, "deterministic": {}, "errors": {}}
    X, y = digits()
    software = "PyTorch %s, CUDA %s" % (torch.__version__, torch.version.cuda)
    for model in a.models.split(","):
        cfg = RUNS[model]
        mdir = os.path.join(out, model)
        os.makedirs(mdir, exist_ok=True)
        state = initial_state(model, a.init, a.seed)
        np.savez_compressed(os.path.join(mdir, "init.npz"), **state)
        data, _ = model_data(model, cfg, a.seed, X, y, mdir)
        for policy in a.policies.split(","):
            for foreach in (False, True):
                name = "%s/%s-foreach%d" % (model, policy, int(foreach))
                t0 = time.time()
                try:
                    recs = [run(model, policy, foreach, state, data, cfg) for _ in range(max(1, a.reps))]
                except Exception:
                    env["errors"][name] = traceback.format_exc()[-2000:]
                    print(name, "FAILED", env["errors"][name], file=sys.stderr, flush=True)
                    continue
                env["deterministic"][name] = all(repr(r) == repr(recs[0]) for r in recs[1:])
                meta = [("model", model), ("policy", policy), ("device", env["device"]), ("software", software),
                        ("optimizer", "adamw lr=%r weight_decay=0.01 betas=0.9,0.999 eps=1e-08 foreach=%s fused=False"
                         % (cfg["lr"], foreach)),
                        ("init", "%s/init.npz (%s)" % (model, a.init))]
                if model != "tiny-transformer":
                    meta.append(("data", "digits rows 0..1499 x %r, batch %d in %s/order.npy" % (cfg["input_scale"], cfg["batch"], model)))
                else:
                    meta.append(("data", "twins.train_batch(step, seed=%d), batch %d" % (a.seed, cfg["batch"])))
                if policy == "16-mixed":
                    meta.append(("scaler", "torch.amp.GradScaler init_scale=65536 growth_interval=2000"))
                if policy == "fp8-current":
                    meta.append(("recipe", "Fp8LinearFn of gpu/torch/record_runs.py: e4m3 x/W, e5m2 dy, current per-tensor "
                                           "scales, _scaled_mm use_fast_accum forward 1, backward 0"))
                write_trace(os.path.join(out, name + ".csv"), meta, recs[0])
                env["runs"][name] = {"s": round(time.time() - t0, 2), "eval_loss": recs[0]["eval_loss"],
                                     "eval_acc": recs[0]["eval_acc"], "skipped": sum(recs[0]["skipped"])}
                print(name, env["runs"][name], "deterministic" if env["deterministic"][name] else "NOT deterministic", flush=True)
    with open(os.path.join(out, "env.json"), "w") as f:
        json.dump(env, f, indent=1)


if __name__ == "__main__":
    main()
