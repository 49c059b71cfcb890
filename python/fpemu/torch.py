# SPDX-License-Identifier: MIT
"""fpemu.torch: PyTorch models through libfpemu (docs/torch.md).

``convert(model, policy="fp8-current", mma="h100", **settings)`` swaps every
``nn.Linear`` of a model for an emulated one, on CPU tensors. Its forward
GEMM and both backward GEMMs (grad_input, grad_weight) run through the
library's GEMM (the ``fpemu_gemmer`` handle of emu/fpemu_api.h) under the
policy, with the names `fpemu train` uses: the policy's casts, its scaling
recipe (the library computes every scale and quantises every operand), the
tensor-core model with fast accumulation for the forward GEMM and f32
promotion for the backward ones (torchao's and TransformerEngine's
default), and the output head kept in high precision on request. Each
cast is counted per layer and tensor class, with the columns of `fpemu
train`'s tensors.csv; ``RunLogger`` writes a run folder from the user's own
loop that `fpemu report` and `fpemu drift` read.

    import fpemu.torch
    model = fpemu.torch.convert(MyNet(), policy="fp8-current")     # mma="h100"
    ...                                                             # train as usual
"""
import concurrent.futures
import ctypes
import json
import math
import os
import shutil
import threading
import time
import warnings
import zlib

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from . import _core
from ._core import FpemuError

__all__ = ["convert", "EmuLinear", "Telemetry", "RunLogger", "telemetry", "grad_norm", "policies", "settings_of",
           "delayed_state", "library_features", "POLICIES", "SETTINGS", "TENSORS_HEADER", "METRICS_HEADER",
           "EVAL_HEADER"]

# ---- policies --------------------------------------------------------------------------------
# What each policy does to a Linear layer, as `fpemu train` (docs/training.md)
# does it. kind: native (PyTorch's own Linear), cast (autocast: GEMM inputs
# rounded to `lo`, f32 accumulation in the tensor-core model, output in
# `lo`), recipe (a scaling recipe of the library on the GEMM inputs, output
# and other roundings in `lo`). The recipe names are the library GEMM's.

POLICIES = {
    "64-true": dict(kind="native", doc="PyTorch's own Linear (f64 model)"),
    "32-true": dict(kind="native", doc="PyTorch's own Linear (the fp32 baseline)"),
    "16-mixed": dict(kind="cast", lo="f16", doc="autocast to f16 (use torch.amp.GradScaler in the loop)"),
    "bf16-mixed": dict(kind="cast", lo="bf16", doc="autocast to bf16"),
    "16-true": dict(kind="cast", lo="f16", doc="f16 GEMMs (parameters: model.half() is yours)"),
    "bf16-true": dict(kind="cast", lo="bf16", doc="bf16 GEMMs (parameters: model.bfloat16() is yours)"),
    "transformer-engine": dict(kind="recipe", lo="bf16", recipe="delayed", fp8_format="HYBRID",
                               doc="TransformerEngine DelayedScaling, bf16 around the Linear"),
    "transformer-engine-float16": dict(kind="recipe", lo="f16", recipe="delayed", fp8_format="HYBRID",
                                       doc="TransformerEngine DelayedScaling, f16 around the Linear"),
    "fp8-delayed": dict(kind="recipe", lo="bf16", recipe="delayed", fp8_format="HYBRID",
                        doc="delayed per-tensor scaling (TE DelayedScaling) over bf16 autocast"),
    "fp8-current": dict(kind="recipe", lo="bf16", recipe="tensor-torchao", fp8_format="HYBRID",
                        doc="torchao float8 tensorwise (current per-tensor scaling)"),
    "fp8-rowwise": dict(kind="recipe", lo="bf16", recipe="rowwise", fp8_format="E4M3", power_2_scale=1,
                        doc="torchao float8 rowwise: a power-of-two scale per row along K"),
    "fp8-blockwise": dict(kind="recipe", lo="bf16", recipe="blockwise", fp8_format="E4M3", fp8_head=0,
                          doc="DeepSeek-V3: 1x128 tiles, 128x128 weight blocks, promotion every 128"),
    "mxfp8": dict(kind="recipe", lo="bf16", recipe="mx", fp8_format="E4M3", mma="b200",
                  doc="OCP MX: blocks of 32 along K with an e8m0 scale, inside the MMA"),
    "nvfp4": dict(kind="recipe", lo="bf16", recipe="nvfp4", fp8_format="E2M1", mma="b200",
                  doc="NVFP4: e2m1 in blocks of 16 with e4m3 scales and an f32 tensor scale"),
}

# `fpemu train` policies the bridge does not run, and why.
REFUSED = {
    "msamp-o1": "MS-AMP's power-of-two ScalingMeta scales have no GEMM recipe in the library's binding interface",
    "msamp-o2": "MS-AMP's power-of-two ScalingMeta scales have no GEMM recipe in the library's binding interface",
    "bf16-true-sr": "stochastic rounding of the parameter update belongs to the optimiser, which is your loop's "
                    "(use bf16-true for the GEMMs)",
    "int8-dynamic": "its GEMMs are f32 (32-true) and its evaluation is torch.ao.quantization.quantize_dynamic",
}

# Settings: `fpemu train`'s names for what the Linear does, and two of the bridge's.
SETTINGS = {
    "mma": "tensor-core model of the low-precision GEMMs: a preset (h100; b200 for mxfp8 and nvfp4) or a preset file",
    "fp8_format": "HYBRID (e4m3 forward, e5m2 gradients) or E4M3",
    "margin": "DelayedScaling margin (scales backed off by 2^margin)",
    "amax_history_len": "DelayedScaling amax history length (1024)",
    "amax_compute_algo": "DelayedScaling: max or most_recent",
    "power_2_scale": "round scales down to powers of two (fp8-rowwise: 1)",
    "fp8_head": "1: the output head through the recipe; 0: kept in the autocast type (fp8-blockwise: 0)",
    "mx_scale_rule": "MX shared exponent rule: floor (OCP) or rceil (cuBLAS)",
    "promotion_interval": "f32 promotion every N elements of K in the promoted GEMMs (0: 128)",
    "block_size": "blockwise K block (128) / MX block (32): only these values",
    "fp8_scaling": "recipe, or none (fp8 casts with scale 1, saturating)",
    "fast_accum": "bridge: GEMMs without promotion: fwd (default, torchao/TE), all, none",
    "threads": "bridge: library GEMM threads, 0 (every CPU) to 64; results never depend on it",
}

# `fpemu train` keys that belong to the training loop, which is yours under the bridge.
LOOP_KEYS = {"optimizer", "lr", "momentum", "dampening", "nesterov", "weight_decay", "beta1", "beta2", "eps",
             "batch_size", "eval_every", "tensors_every", "checkpoint_every", "scaler", "init_scale", "growth_factor",
             "backoff_factor", "growth_interval", "loss_scale", "reduce_range", "hidden", "depth", "d_model", "heads",
             "d_ff", "seq_digits", "vocab", "task", "init_gain", "input_scale", "numerics", "adamw_impl"}

CLASSES = ("activation", "weight", "output", "grad_output", "grad_input", "grad_weight", "param", "optim_m", "optim_v")
TENSORS_HEADER = "step,layer,class,format,n,amax,scale,overflow,underflow,saturated,subnormal,nonfinite_in\n"
METRICS_HEADER = "step,loss,grad_norm,loss_scale,skipped,overflow,underflow,lr,casts\n"
EVAL_HEADER = "step,eval_loss,eval_accuracy\n"


def policies():
    """{policy: what it does} for every policy convert() takes."""
    return {k: v["doc"] for k, v in POLICIES.items()}


_features = None


def library_features():
    """What the loaded libfpemu offers beyond binding interface version 1
    that some recipes need: {"given_scales": gemmer options scale_a/scale_b
    and fpemu_api_delayed_scale (delayed scaling), "pow2": option pow2,
    "block_pow2": option block_pow2, "block_tiles": options block_a_rows /
    block_b_cols (DeepSeek-V3's 1x128 x 1x128 wgrad), "trans": options
    trans_a / trans_b (operands read transposed, without copies),
    "scale_min": telemetry scale_min_a / scale_min_b (the smallest per-row
    or per-block scale in the telemetry's scale column)}."""
    global _features
    if _features is None:
        _features = {
            "given_scales": _core._gemmer_accepts("scale_a", "1") and _core.N.delayed_scale is not None,
            "pow2": _core._gemmer_accepts("pow2", "1", "rowwise"),
            "block_pow2": _core._gemmer_accepts("block_pow2", "1", "blockwise"),
            "block_tiles": _core._gemmer_accepts("block_b_cols", "1", "blockwise"),
            "trans": _core._gemmer_trans(),
            "scale_min": "scale_min_a" in _core._keys(_core.N.gemmer_stat_key),
        }
    return dict(_features)


def _bool(key, v):
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (int, np.integer)) and v in (0, 1):
        return int(v)
    if isinstance(v, str) and v.lower() in ("0", "1", "true", "false", "yes", "no"):
        return int(v.lower() in ("1", "true", "yes"))
    raise FpemuError("%s=%r: expected 0/1/true/false/yes/no" % (key, v))


def _int(key, v, lo, hi):
    try:
        iv = int(v)
        if isinstance(v, bool) or (isinstance(v, float) and v != iv) or (isinstance(v, str) and str(iv) != v.strip()):
            raise ValueError
    except (TypeError, ValueError):
        raise FpemuError("%s=%r: expected an integer" % (key, v)) from None
    if not lo <= iv <= hi:
        raise FpemuError("%s=%r: expected an integer in [%d, %d]" % (key, v, lo, hi))
    return iv


def _choice(key, v, choices):
    if not isinstance(v, str) or v not in choices:
        raise FpemuError("%s=%r: expected one of %s" % (key, v, ", ".join(choices)))
    return v


def _resolve(policy, mma, settings):
    """The policy's settings with the given ones applied and checked: a dict
    of every key of SETTINGS (the values summary.json records)."""
    if policy in REFUSED:
        raise FpemuError("policy %r: not run by fpemu.torch: %s" % (policy, REFUSED[policy]))
    if policy not in POLICIES:
        raise FpemuError("unknown policy %r (expected one of: %s)" % (policy, ", ".join(POLICIES)))
    p = POLICIES[policy]
    recipe = p.get("recipe")
    s = {
        "mma": p.get("mma", "h100"),
        "fp8_format": p.get("fp8_format", "HYBRID"),
        "margin": 0, "amax_history_len": 1024, "amax_compute_algo": "max",
        "power_2_scale": p.get("power_2_scale", 0),
        "fp8_head": p.get("fp8_head", 1),
        "mx_scale_rule": "floor",
        "promotion_interval": 0,
        "block_size": 32 if recipe == "mx" else 128,
        "fp8_scaling": "recipe",
        "fast_accum": "fwd",
        "threads": 0,
    }
    if mma is not None:
        settings = dict(settings, mma=mma)
    for k, v in settings.items():
        if k in LOOP_KEYS:
            raise FpemuError("%s: a setting of fpemu train's own training loop; under fpemu.torch the loop is yours "
                             "(torch.optim, torch.amp.GradScaler, your data)" % k)
        if k not in SETTINGS:
            raise FpemuError("unknown setting %r (expected one of: %s)" % (k, ", ".join(SETTINGS)))
        if k == "mma":
            if not isinstance(v, str):
                raise FpemuError("mma=%r: expected a preset name or a preset file" % (v,))
            s[k] = v
        elif k == "fp8_format":
            s[k] = _choice(k, v, ("HYBRID", "E4M3") if recipe != "nvfp4" else ("E2M1",))
        elif k == "margin":
            s[k] = _int(k, v, 0, 64)
        elif k == "amax_history_len":
            s[k] = _int(k, v, 1, 65536)
        elif k == "amax_compute_algo":
            s[k] = _choice(k, v, ("max", "most_recent"))
        elif k in ("power_2_scale", "fp8_head"):
            s[k] = _bool(k, v)
        elif k == "mx_scale_rule":
            s[k] = _choice(k, v, ("floor", "rceil"))
        elif k == "promotion_interval":
            s[k] = _int(k, v, 0, 1 << 30)
        elif k == "block_size":
            s[k] = _int(k, v, 1, 4096)
        elif k == "fp8_scaling":
            s[k] = _choice(k, v, ("recipe", "none"))
        elif k == "fast_accum":
            s[k] = _choice(k, v, ("fwd", "all", "none"))
        elif k == "threads":
            s[k] = _int(k, v, 0, 64)
    feats = library_features()
    if recipe == "blockwise" and s["block_size"] != 128:
        raise FpemuError("block_size=%d: the library's blockwise recipe has 128-element blocks (the binding "
                         "interface has no block_k option)" % s["block_size"])
    if recipe == "mx" and s["block_size"] != 32:
        raise FpemuError("block_size=%d: MX blocks are 32 elements (fixed by OCP)" % s["block_size"])
    if recipe == "blockwise" and s["promotion_interval"] not in (0, 128):
        raise FpemuError("promotion_interval=%d: the library's blockwise recipe promotes once per 128-element block "
                         "(0 or 128)" % s["promotion_interval"])
    default_pow2 = p.get("power_2_scale", 0)
    if s["power_2_scale"] != default_pow2 and s["fp8_scaling"] == "recipe" and recipe in (
            "tensor-torchao", "rowwise", "blockwise"):
        need = "block_pow2" if recipe == "blockwise" else "pow2"
        if not feats[need]:
            raise FpemuError("power_2_scale=%d under %s: the loaded libfpemu's gemmer has no option %r (needed to "
                             "change the recipe's power-of-two rounding; docs/torch.md)" % (s["power_2_scale"], policy, need))
    if recipe == "delayed" and s["fp8_scaling"] == "recipe" and not feats["given_scales"]:
        raise FpemuError("policy %s: delayed scaling needs per-tensor scales passed to the library GEMM (gemmer "
                         "options scale_a, scale_b) and TE's scale rule (fpemu_api_delayed_scale), which the loaded "
                         "libfpemu (%s) lacks (docs/torch.md, 'Limits')" % (policy, _core.library_path()))
    return s


# ---- telemetry -----------------------------------------------------------------------------------


class Telemetry:
    """Cast counts per layer, tensor class and format, as `fpemu train`'s
    tensors.csv has them, for the current step; and the step's totals
    (metrics.csv's casts, overflow, underflow). RunLogger.log_step reads and
    clears them."""

    def __init__(self):
        self.layers = []          # layer names in model order
        self.slots = {}           # (layer, class) -> {fmt: [n, amax, scale, overflow, underflow, saturated, subnormal, nonfinite_in]}
        self.casts = self.overflow = self.underflow = 0
        self.lock = threading.Lock()

    def add_layer(self, name):
        if name not in self.layers:
            self.layers.append(name)

    def account(self, layer, cls, fmt, n, overflow, underflow, saturated, subnormal, nonfinite_in, amax, scale):
        n = int(n)
        with self.lock:
            per = self.slots.setdefault((layer, cls), {})
            t = per.get(fmt)
            if t is None:
                per[fmt] = t = [0, 0.0, scale, 0, 0, 0, 0, 0]
            t[0] += n
            if amax > t[1]:
                t[1] = amax
            if scale < t[2] or math.isnan(scale):
                t[2] = scale
            t[3] += int(overflow)
            t[4] += int(underflow)
            t[5] += int(saturated)
            t[6] += int(subnormal)
            t[7] += int(nonfinite_in)
            self.casts += n
            self.overflow += int(overflow)
            self.underflow += int(underflow)

    def rows(self):
        """The step's rows: dicts with tensors.csv's columns (but step), in
        fpemu train's order: layers in model order, classes in CLASSES' order,
        formats first-seen first."""
        out = []
        with self.lock:
            order = {n: i for i, n in enumerate(self.layers)}
            keys = sorted(self.slots, key=lambda k: (order.get(k[0], len(order)), k[0], CLASSES.index(k[1])))
            for layer, cls in keys:
                for fmt, t in self.slots[(layer, cls)].items():
                    out.append(dict(layer=layer, cls=cls, format=fmt, n=t[0], amax=t[1], scale=t[2], overflow=t[3],
                                    underflow=t[4], saturated=t[5], subnormal=t[6], nonfinite_in=t[7]))
        return out

    def totals(self):
        """(casts, overflow fraction, underflow fraction) of the step."""
        with self.lock:
            c = self.casts
            return c, (self.overflow / c if c else 0.0), (self.underflow / c if c else 0.0)

    def clear(self):
        with self.lock:
            self.slots.clear()
            self.casts = self.overflow = self.underflow = 0


def _finite_amax(a):
    """max |x| over the finite elements (0 if none)."""
    a = np.abs(a[np.isfinite(a)])
    return float(a.max()) if a.size else 0.0


def _nonnan_amax(a):
    """max |x| over the non-NaN elements, inf included (the amax delayed
    scaling records, as TE's fmaxf reduction); 0 if none."""
    m = np.fmax.reduce(np.abs(a).reshape(-1)) if a.size else 0.0
    return 0.0 if np.isnan(m) else float(m)


# ---- the bridge: one per converted model --------------------------------------------------------


class _Bridge:
    """The converted model's policy, settings, telemetry and library handles."""

    def __init__(self, policy, settings):
        self.policy = policy
        self.settings = settings
        self.telemetry = Telemetry()
        self.local = threading.local()
        self.warned = set()
        self.cfg = self._linear_cfg(hp=False)
        self.cfg_hp = self._linear_cfg(hp=True)

    def __deepcopy__(self, memo):
        return self  # copies of a converted model (copy.deepcopy: EMA, checkpoints) share its bridge

    def __getstate__(self):  # pickling: the handles and the lock are made anew
        st = dict(self.__dict__)
        del st["local"]
        st["telemetry"] = list(self.telemetry.layers)
        return st

    def __setstate__(self, st):
        layers = st.pop("telemetry")
        self.__dict__.update(st)
        self.local = threading.local()
        self.telemetry = Telemetry()
        self.telemetry.layers = layers

    def _linear_cfg(self, hp):
        """What one Linear does: formats, recipe and promotion of its three GEMMs."""
        p, s = POLICIES[self.policy], self.settings
        kind = p["kind"]
        c = dict(kind=kind, lo=p.get("lo"), mma=s["mma"], threads=s["threads"], delayed=False, hp=hp)
        if kind == "native":
            return c
        if kind == "recipe" and hp:
            kind = c["kind"] = "cast"
        if kind == "cast":
            lo = c["lo"]
            c.update(fx=lo, fw=lo, fy=lo, scaling="none", sat=0, per_tensor=True, promote=(0, 0, 0), opts={})
            return c
        recipe = p["recipe"]
        if recipe == "nvfp4":
            fx = fw = fy = "e2m1"
        else:
            fx = fw = "e4m3"
            fy = "e5m2" if s["fp8_format"] == "HYBRID" else "e4m3"
        pi = s["promotion_interval"] or 128
        fast = s["fast_accum"]
        promo = (0 if fast in ("fwd", "all") else pi, 0 if fast == "all" else pi, 0 if fast == "all" else pi)
        opts = {}
        if s["fp8_scaling"] == "none":
            scaling, sat, per_tensor = "none", 1, True
        elif recipe == "delayed":
            scaling, sat, per_tensor = "given", 1, True
            c["delayed"] = True
        elif recipe == "tensor-torchao":
            scaling, sat, per_tensor = "tensor-torchao", 1, True
            if s["power_2_scale"]:
                opts["pow2"] = 1
        elif recipe == "rowwise":
            scaling, sat, per_tensor = "rowwise", 1, False
            if not s["power_2_scale"]:
                opts["pow2"] = 0
        elif recipe == "blockwise":
            scaling, sat, per_tensor = "blockwise", 1, False
            promo = (128, 128, 128)  # DeepGEMM: promotion once per 128-element block, every GEMM
            if s["power_2_scale"]:
                opts["block_pow2"] = 1
        elif recipe == "mx":
            scaling = "mx-rceil" if s["mx_scale_rule"] == "rceil" else "mx-floor"
            sat, per_tensor, promo = 1, False, (0, 0, 0)  # block scales inside the MMA (Blackwell)
        else:  # nvfp4
            scaling, sat, per_tensor, promo = "nvfp4", 1, False, (0, 0, 0)
        c.update(fx=fx, fw=fw, fy=fy, scaling=scaling, sat=sat, per_tensor=per_tensor, promote=promo, opts=opts,
                 recipe=recipe)
        return c

    def plan(self, c, which, afmt, bfmt):
        """A configured library GEMM for GEMM `which` (0 forward, 1 dgrad, 2
        wgrad) of a Linear with config c, cached per thread."""
        cache = getattr(self.local, "plans", None)
        if cache is None:
            cache = self.local.plans = {}
        key = (c["hp"], which, afmt, bfmt)
        pl = cache.get(key)
        if pl is None:
            opts = [("scaling", c["scaling"]), ("promote", c["promote"][which]), ("sat", c["sat"])]
            opts += sorted(c["opts"].items())
            if which == 2 and c.get("recipe") == "blockwise":
                # DeepSeek-V3's wgrad scales both operands in 1 x 128 tiles along K (the tokens)
                if library_features()["block_tiles"]:
                    opts.append(("block_b_cols", 1))
                elif "block_tiles" not in self.warned:
                    self.warned.add("block_tiles")
                    warnings.warn("fp8-blockwise: the loaded libfpemu's gemmer has no block_b_cols option, so the "
                                  "wgrad GEMM scales the activations in 128x128 blocks instead of DeepSeek-V3's "
                                  "1x128 tiles (docs/torch.md)", stacklevel=4)
            pl = cache[key] = _core._GemmPlan(c["mma"], afmt, bfmt, opts)
        return pl

    def rounder(self, fmt):
        """The library cast to fmt (rne, not saturating: an autocast .to()),
        cached per thread."""
        cache = getattr(self.local, "rounders", None)
        if cache is None:
            cache = self.local.rounders = {}
        r = cache.get(fmt)
        if r is None:
            r = cache[fmt] = _core._RoundPlan(fmt)
        return r

    def round(self, arr, fmt):
        """arr (C-contiguous float32) rounded to fmt by the library: (values,
        figures). A large array is cut into slices cast at once on the
        setting's threads (each with its own handle; ctypes lets go of the
        GIL), the counts added up: the same values and counts as one cast."""
        n = arr.size
        t = min(self.threads(), 8)
        if t <= 1 or n < (1 << 16):
            return self.rounder(fmt).run(arr)
        flat = arr.reshape(-1)
        cuts = [n * i // t for i in range(t + 1)]
        parts = [flat[cuts[i]:cuts[i + 1]] for i in range(t)]
        pool = _pool(t - 1)
        futs = [pool.submit(lambda p: self.rounder(fmt).run(p), p) for p in parts[1:]]
        res = [self.rounder(fmt).run(parts[0])] + [f.result() for f in futs]
        vals = np.concatenate([r[0] for r in res]).reshape(arr.shape)
        st = {k: sum(r[1][k] for r in res) for k in ("n", "overflow", "saturated", "flushed", "subnormal", "nonfinite_in")}
        am = [r[1]["amax"] for r in res if not math.isnan(r[1]["amax"])]
        st["amax"] = max(am) if am else math.nan
        return vals, st

    def threads(self):
        return self.settings["threads"] or min(os.cpu_count() or 1, 64)

    def both(self, gemm, jobs):
        """[gemm(job, threads) for job in jobs]: the two backward GEMMs at once
        on half the threads each where they are large (they are independent,
        and two GEMMs side by side use the CPUs better than one after the
        other), else in turn. Results never depend on it."""
        T = self.threads()
        big = all(_size(j[5], j[6], False) >= (1 << 23) for j in jobs)
        if len(jobs) < 2 or T < 2 or not big:
            return [gemm(j, None) for j in jobs]
        f = _pool(1).submit(gemm, jobs[1], T - T // 2)
        first = gemm(jobs[0], T // 2)
        return [first, f.result()]

    def run(self, pl, c, A, B, threads=None, ta=False, tb=False):
        """pl on A x B (ta, tb: given as their transposes, _tr) with the
        setting's threads (or `threads`); threads=0 (every CPU) runs a small
        GEMM on one thread (starting threads costs more than they save
        there). Results never depend on the thread count."""
        t = c["threads"] if threads is None else threads
        if t == 0 and _size(A, B, tb) < (1 << 23):
            t = 1
        if getattr(pl, "threads", None) != t:
            pl.set("threads", t)
            pl.threads = t
        return pl.run(A, B, ta, tb)

    def check(self):
        """Build each GEMM of the policy once, so that a model, format or
        option the library refuses fails at convert() with its message."""
        for c in (self.cfg, self.cfg_hp):
            if c["kind"] == "native":
                continue
            for which, (a, b) in enumerate(((c["fx"], c["fw"]), (c["fy"], c["fw"]), (c["fy"], c["fx"]))):
                try:
                    self.plan(c, which, a, b)
                except FpemuError as e:
                    raise FpemuError("policy %s, mma %s: %s" % (self.policy, c["mma"], e)) from None


_POOL, _POOL_N = None, 0


def _pool(n):
    """A process-wide pool of at least n threads for the sliced casts."""
    global _POOL, _POOL_N
    if _POOL is None or _POOL_N < n:
        _POOL = concurrent.futures.ThreadPoolExecutor(max_workers=n, thread_name_prefix="fpemu-cast")
        _POOL_N = n
    return _POOL


def _tr(a):
    """A GEMM operand that is the transpose of the 2-D float32 array a:
    (a, True), which the library reads as it lies (gemmer options trans_a /
    trans_b), or, from a library without them, (a^T, False): a C-contiguous
    copy (PyTorch's: several times numpy's speed)."""
    if _core._gemmer_trans():
        return a, True
    return torch.from_numpy(a).t().contiguous().numpy(), False


def _size(A, B, tb):
    """M K N of the GEMM A x B (A M x K or its transpose; B K x N, or N x K with tb)."""
    return A.size * (B.shape[0] if tb else B.shape[1])


# ---- the emulated Linear ----------------------------------------------------------------------------

_ROLES = ("x", "w", "dy")


def _np32(t):
    """A tensor's values as a C-contiguous float32 ndarray (no copy when it is one)."""
    t = t.detach()
    if t.dtype != torch.float32:
        t = t.to(torch.float32)
    if not t.is_contiguous():
        t = t.contiguous()
    return t.numpy()


class _LinearFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, mod, count):
        with np.errstate(all="ignore"):  # inf and NaN go through as the policy's arithmetic gives them
            y = mod._forward_np(x, weight, bias, count)
        ctx.mod, ctx.count, ctx.x_shape, ctx.x_dtype = mod, count, x.shape, x.dtype
        ctx.has_bias = bias is not None
        # autograd keeps the tensors (and checks they are not changed in place before the backward)
        ctx.save_for_backward(x, weight, bias)
        return y

    @staticmethod
    def backward(ctx, gy):
        x, weight, bias = ctx.saved_tensors
        with np.errstate(all="ignore"):
            gx, gw, gb = ctx.mod._backward_np(ctx, gy, x, weight, bias)
        return gx, gw, gb, None, None


class EmuLinear(nn.Module):
    """An nn.Linear whose GEMMs run through libfpemu under the bridge's
    policy. It holds the original Linear's weight and bias Parameters
    (the same objects: an optimiser built before convert() still updates
    them). Delayed scaling's amax histories and scales live here."""

    def __init__(self, linear, bridge, name, hp=False):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.weight = linear.weight
        self.register_parameter("bias", linear.bias)
        self.layer_name = name
        self.hp = hp
        object.__setattr__(self, "_bridge", bridge)  # not a submodule, not in the state_dict
        self.cfg = bridge.cfg_hp if hp else bridge.cfg
        s = bridge.settings
        hl = s["amax_history_len"]
        self._ds = {r: dict(hist=np.zeros(hl), cur=0.0, scale=1.0) for r in _ROLES} if self.cfg["delayed"] else None
        self._ds_pending = False
        bridge.telemetry.add_layer(name)

    def extra_repr(self):
        c = self.cfg
        if c["kind"] == "native":
            return "in_features=%d, out_features=%d, policy=%s (PyTorch's Linear)" % (
                self.in_features, self.out_features, self._bridge.policy)
        return "in_features=%d, out_features=%d, policy=%s%s, mma=%s, %s x %s, grad %s" % (
            self.in_features, self.out_features, self._bridge.policy, " (head in %s)" % c["lo"] if self.hp else "",
            c["mma"], c["fx"], c["fw"], c["fy"])

    def forward(self, x):
        if self.cfg["kind"] == "native":
            return F.linear(x, self.weight, self.bias)
        if x.device.type != "cpu" or self.weight.device.type != "cpu":
            raise FpemuError("%s: fpemu.torch runs on CPU tensors (got %s)" % (self.layer_name, x.device))
        if x.shape[-1] != self.in_features:
            raise FpemuError("%s: input has %d features, the layer takes %d" % (self.layer_name, x.shape[-1], self.in_features))
        # counted (telemetry, amax histories): training forwards with autograd on, and their backwards
        count = self.training and torch.is_grad_enabled()
        if self._ds is not None and self._ds_pending and count:
            self._delayed_update()
        return _LinearFn.apply(x, self.weight, self.bias, self, count)

    # -- delayed scaling (TransformerEngine DelayedScaling, the engine's rules) --

    def _record(self, role, amax):
        d = self._ds[role]
        if amax > d["cur"]:
            d["cur"] = amax
        self._ds_pending = True

    def _delayed_update(self):
        """The step's end: each history rolls (this step's amax becomes slot
        0), reduces (max over the window, or the newest), and the library's
        TE rule gives the new scale (the old one stays for an amax of 0, inf
        or NaN)."""
        s, c = self._bridge.settings, self.cfg
        fmts = {"x": c["fx"], "w": c["fw"], "dy": c["fy"]}
        for r in _ROLES:
            d = self._ds[r]
            h = d["hist"]
            h[1:] = h[:-1].copy()
            h[0] = d["cur"]
            d["cur"] = 0.0
            amax = h[0] if s["amax_compute_algo"] == "most_recent" else float(h.max())
            d["scale"] = _core._delayed_scale(fmts[r], amax, s["margin"], d["scale"])
        self._ds_pending = False

    def _given(self, pl, ra, rb):
        pl.set("scale_a", float(self._ds[ra]["scale"]).hex())
        pl.set("scale_b", float(self._ds[rb]["scale"]).hex())

    # -- telemetry --

    def _account_gemm(self, st, side, arr, cls, fmt):
        amax = st["amax_" + side]
        if not math.isfinite(amax):
            amax = _finite_amax(arr)
        p = side + "_"
        # the operand's smallest encode scale, as fpemu train writes it (a library
        # without scale_min_*: the per-tensor scale, 1 for per-row and per-block recipes)
        scale = st.get("scale_min_" + side, st["scale_" + side])
        self._bridge.telemetry.account(self.layer_name, cls, fmt, st[p + "n"], st[p + "overflow"], st[p + "flushed"],
                                       st[p + "saturated"], st[p + "subnormal"], st[p + "nonfinite_in"], amax, scale)

    def _round(self, arr, fmt, cls, count):
        """arr rounded to fmt (rne) by the library, counted as cls."""
        vals, st = self._bridge.round(arr, fmt)
        if count:
            self._bridge.telemetry.account(self.layer_name, cls, fmt, st["n"], st["overflow"], st["flushed"],
                                           st["saturated"], st["subnormal"], st["nonfinite_in"],
                                           st["amax"] if math.isfinite(st["amax"]) else 0.0, 1.0)
        return vals

    # -- the three GEMMs --

    def _forward_np(self, x, weight, bias, count):
        c, b = self.cfg, self._bridge
        x2 = _np32(x).reshape(-1, self.in_features)
        w = _np32(weight)
        pl = b.plan(c, 0, c["fx"], c["fw"])
        if c["delayed"]:
            self._given(pl, "x", "w")
        wt, tw = _tr(w)
        d = b.run(pl, c, x2, wt, tb=tw)
        if count:
            st = pl.stats()
            self._account_gemm(st, "a", x2, "activation", c["fx"])
            self._account_gemm(st, "b", w, "weight", c["fw"])
            if c["delayed"]:
                self._record("x", st["amax_a"] if not math.isnan(st["amax_a"]) else _nonnan_amax(x2))
                self._record("w", st["amax_b"] if not math.isnan(st["amax_b"]) else _nonnan_amax(w))
        if bias is not None:  # the bias in the autocast type, added in the f32 epilogue
            d += self._round(_np32(bias), c["lo"], "weight", count)
        y = self._round(d, c["lo"], "output", count)
        y = torch.from_numpy(y.reshape(tuple(x.shape[:-1]) + (self.out_features,)))
        return y if x.dtype == torch.float32 else y.to(x.dtype)

    def _backward_np(self, ctx, gy, x, weight, bias):
        c, b, count = self.cfg, self._bridge, ctx.count
        need_x, need_w, need_b = ctx.needs_input_grad[0], ctx.needs_input_grad[1], ctx.has_bias and ctx.needs_input_grad[2]
        gy2 = _np32(gy).reshape(-1, self.out_features)
        # the gradient of an output in the autocast type is in that type
        g = self._round(gy2, c["lo"], "grad_output", count)
        x2 = _np32(x).reshape(-1, self.in_features)
        gx = gw = gb = None
        jobs = []
        if need_x:  # grad_input = dy . W
            jobs.append((1, c["fy"], c["fw"], "dy", "w", g, _np32(weight), False))
        if need_w:  # grad_weight = dy^T . x
            gt, tg = _tr(g)
            jobs.append((2, c["fy"], c["fx"], "dy", "x", gt, x2, tg))

        def gemm(job, threads):
            which, fa, fb, ra, rb, A, B, ta = job
            pl = b.plan(c, which, fa, fb)
            if c["delayed"]:
                self._given(pl, ra, rb)
            d = b.run(pl, c, A, B, threads, ta=ta)
            return d, (pl.stats() if count else None)

        res = b.both(gemm, jobs)
        counted_dy = False
        for job, (d, st) in zip(jobs, res):
            which, A, B = job[0], job[5], job[6]
            if which == 1:
                if count:
                    self._account_gemm(st, "a", A, "grad_output", c["fy"])
                    counted_dy = True
                    if c.get("recipe") in ("rowwise", "blockwise") and c["scaling"] != "none":
                        self._account_gemm(st, "b", B, "weight", c["fw"])  # re-quantised along out_features
                    if c["delayed"]:
                        self._record("dy", st["amax_a"] if not math.isnan(st["amax_a"]) else _nonnan_amax(g))
                gxn = self._round(d, c["lo"], "grad_input", count)
                gx = torch.from_numpy(gxn.reshape(tuple(ctx.x_shape[:-1]) + (self.in_features,)))
                if ctx.x_dtype != torch.float32:
                    gx = gx.to(ctx.x_dtype)
            else:
                if count:
                    if not counted_dy:
                        self._account_gemm(st, "a", A, "grad_output", c["fy"])
                        if c["delayed"]:
                            self._record("dy", st["amax_a"] if not math.isnan(st["amax_a"]) else _nonnan_amax(g))
                    if not c["per_tensor"]:
                        self._account_gemm(st, "b", B, "activation", c["fx"])  # re-quantised along the batch
                # DeepSeek-V3's wgrad GEMM writes f32 weight gradients
                gwn = d if c.get("recipe") == "blockwise" else self._round(d, c["lo"], "grad_weight", count)
                gw = torch.from_numpy(gwn)
                if weight.dtype != torch.float32:
                    gw = gw.to(weight.dtype)
        if need_b:
            gbn = self._round(g.sum(axis=0, dtype=np.float32), c["lo"], "grad_weight", count)
            gb = torch.from_numpy(gbn)
            if bias.dtype != torch.float32:
                gb = gb.to(bias.dtype)
        return gx, gw, gb


# ---- convert -------------------------------------------------------------------------------------------


def convert(model, policy="fp8-current", mma=None, head=None, filter=None, **settings):
    """Swap every nn.Linear of model (in place; a bare nn.Linear is returned
    converted) for an EmuLinear running the policy through libfpemu.

    policy: a name of `fpemu train` (policies()); mma: the tensor-core model
    (h100; b200 for mxfp8 and nvfp4); settings: `fpemu train`'s keys for the
    Linear (SETTINGS: fp8_format, margin, amax_history_len,
    amax_compute_algo, power_2_scale, fp8_head, mx_scale_rule,
    promotion_interval, block_size, fp8_scaling) and the bridge's
    fast_accum and threads. head: the name of the output head (default: the
    last Linear in the model's order), which fp8_head=0 keeps in the
    autocast type. filter(name, module) -> bool chooses the Linears to
    convert (default: all but nn.MultiheadAttention's out_proj, which that
    module never calls). Returns the model."""
    if not isinstance(model, nn.Module):
        raise FpemuError("convert: expected an nn.Module, got %r" % type(model).__name__)
    s = _resolve(policy, mma, settings)
    bridge = _Bridge(policy, s)
    bridge.check()
    if isinstance(model, EmuLinear) or any(isinstance(m, EmuLinear) for m in model.modules()):
        raise FpemuError("convert: the model is already converted")
    if isinstance(model, nn.Linear):
        names = [""]
    else:
        skip = set()
        for n, m in model.named_modules():
            if isinstance(m, nn.MultiheadAttention):  # it reads out_proj's weight, never calls it
                skip.add((n + "." if n else "") + "out_proj")
        names = [n for n, m in model.named_modules() if isinstance(m, nn.Linear) and n not in skip and
                 (filter is None or filter(n, m))]
    if head is not None and head not in names:
        raise FpemuError("convert: head %r is not a Linear of the model (its Linears: %s)" % (head, ", ".join(names)))
    head_name = head if head is not None else (names[-1] if names else None)
    hp_head = not s["fp8_head"] and POLICIES[policy]["kind"] == "recipe"
    if isinstance(model, nn.Linear):  # a layer on its own: the recipe's (head= names it the head)
        return _attach(EmuLinear(model, bridge, "linear", hp=hp_head and head == ""), bridge)
    for n in names:
        parent_name, _, attr = n.rpartition(".")
        parent = model.get_submodule(parent_name) if parent_name else model
        setattr(parent, attr, EmuLinear(getattr(parent, attr), bridge, n, hp=hp_head and n == head_name))
    return _attach(model, bridge)


def _attach(model, bridge):
    object.__setattr__(model, "_fpemu_bridge", bridge)
    return model


def _bridge_of(model):
    b = getattr(model, "_fpemu_bridge", None)
    if b is None:
        raise FpemuError("not a model converted by fpemu.torch.convert")
    return b


def telemetry(model):
    """The Telemetry of a converted model (the current step's counts)."""
    return _bridge_of(model).telemetry


def settings_of(model):
    """(policy, settings) of a converted model: every SETTINGS key's value."""
    b = _bridge_of(model)
    return b.policy, dict(b.settings)


def delayed_state(module):
    """An EmuLinear's delayed-scaling state: {role: {"hist": array (newest
    first), "cur": this step's amax so far, "scale": float}} for the roles
    x, w, dy; None under other recipes."""
    if not isinstance(module, EmuLinear) or module._ds is None:
        return None
    return {r: dict(hist=d["hist"].copy(), cur=d["cur"], scale=d["scale"]) for r, d in module._ds.items()}


def grad_norm(parameters):
    """The L2 norm of the parameters' gradients (computed in f64, rounded to
    f32; inf or nan if a gradient holds one): metrics.csv's grad_norm."""
    s = 0.0
    for p in parameters:
        if p.grad is not None:
            s += float(torch.sum(p.grad.detach().double() ** 2))
    return float(np.float32(math.sqrt(s) if not math.isnan(s) else math.nan))


# ---- the run folder ------------------------------------------------------------------------------------


def _num(v):
    """A number as fpemu train writes it: %.9g of its f32 value (reads back
    exactly as that f32), nan and inf spelt so; None is nan."""
    if v is None:
        return "nan"
    v = float(np.float32(v))
    if math.isnan(v):
        return "nan"
    return "%.9g" % v


def _jnum(v):
    if v is None:
        return None
    v = float(np.float32(v))
    return float("%.9g" % v) if math.isfinite(v) else None


def _renameat2_exchange(a, b):
    """Exchange two paths in one rename (Linux renameat2 RENAME_EXCHANGE);
    False where the system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    AT_FDCWD, RENAME_EXCHANGE = -100, 2
    return fn(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0


class RunLogger:
    """A run folder from your own training loop, as `fpemu train --out`
    writes one: metrics.csv (a row per log_step), tensors.csv (the converted
    model's telemetry at step 1 and every tensors_every steps), eval.csv (a
    row per log_eval) and summary.json (listing the files with their sizes
    and CRC-32, which `fpemu report` and `fpemu drift` check). The folder is
    written whole by flush() and close() (a temporary folder beside it,
    exchanged in one rename).

        log = fpemu.torch.RunLogger("runs/fp8", model=model, name="my-cnn")
        for step ...:
            ...
            log.log_step(loss.item(), grad_norm=gn, loss_scale=scale, skipped=skipped, lr=lr)
        log.log_eval(eval_loss, eval_acc)
        log.close()

    model: the converted model (its policy, settings and telemetry), or a
    model's name for a model that is not converted (policy is then needed:
    an fpemu policy name such as 32-true). name: the model's name in
    summary.json (default: the model class's name; `fpemu report` today
    reads only folders of fpemu train's models, docs/torch.md)."""

    def __init__(self, out_dir, model=None, policy=None, name=None, seed=None, tensors_every=10, settings=None):
        self.out = os.path.abspath(os.fspath(out_dir))
        self.bridge = getattr(model, "_fpemu_bridge", None) if isinstance(model, nn.Module) else None
        if self.bridge is not None:
            if policy is not None and policy != self.bridge.policy:
                raise FpemuError("RunLogger: policy %r, but the model was converted under %r" % (policy, self.bridge.policy))
            policy = self.bridge.policy
        if not isinstance(policy, str) or not policy:
            raise FpemuError("RunLogger: policy: expected a policy name (the model is not converted)")
        if name is None:
            name = model if isinstance(model, str) else type(model).__name__ if model is not None else "model"
        self.name, self.policy, self.seed = str(name), policy, seed
        self.params = sum(p.numel() for p in model.parameters()) if isinstance(model, nn.Module) else None
        self.settings = dict(self.bridge.settings) if self.bridge is not None else {}
        self.settings.update(settings or {})
        self.tensors_every = _int("tensors_every", tensors_every, 0, 10 ** 9)
        self.met, self.ten, self.ev = [METRICS_HEADER], [TENSORS_HEADER], [EVAL_HEADER]
        self.step = 0
        self.skipped = 0
        self.last = dict(loss=None, scale=1.0)
        self.eval_last = None
        self.t0 = time.time()
        parent = os.path.dirname(self.out)
        if not os.path.isdir(parent):
            raise FpemuError("RunLogger: %s: no such folder" % parent)
        if os.path.exists(self.out):
            if not os.path.isdir(self.out):
                raise FpemuError("RunLogger: %s exists and is not a folder" % self.out)
            if os.path.exists(os.path.join(self.out, "checkpoint.bin")):
                raise FpemuError("RunLogger: %s holds checkpoint.bin: an fpemu train folder (choose another)" % self.out)
        if self.bridge is not None:
            self.bridge.telemetry.clear()

    def log_step(self, loss, grad_norm=None, loss_scale=1.0, skipped=False, lr=None, step=None):
        """One optimiser step's row (steps count from 1; `step` checks the
        count). Reads the converted model's telemetry of the step (the casts
        since the previous log_step) and clears it."""
        self.step += 1
        if step is not None and int(step) != self.step:
            raise FpemuError("RunLogger.log_step: step %s, but this is row %d (steps go 1, 2, ...)" % (step, self.step))
        loss = float(loss.detach()) if isinstance(loss, torch.Tensor) else (None if loss is None else float(loss))
        casts, of, uf = self.bridge.telemetry.totals() if self.bridge is not None else (0, 0.0, 0.0)
        sk = 1 if skipped else 0
        self.skipped += sk
        self.met.append("%d,%s,%s,%s,%d,%s,%s,%s,%d\n" % (
            self.step, _num(loss), _num(grad_norm), _num(loss_scale), sk, "%.9g" % of, "%.9g" % uf,
            _num(lr) if lr is not None else "nan", casts))
        if self.bridge is not None:
            if self.tensors_every > 0 and (self.step == 1 or self.step % self.tensors_every == 0):
                for r in self.bridge.telemetry.rows():
                    self.ten.append("%d,%s,%s,%s,%d,%s,%s,%d,%d,%d,%d,%d\n" % (
                        self.step, r["layer"], r["cls"], r["format"], r["n"], _num(r["amax"]), _num(r["scale"]),
                        r["overflow"], r["underflow"], r["saturated"], r["subnormal"], r["nonfinite_in"]))
            self.bridge.telemetry.clear()
        self.last = dict(loss=loss, scale=loss_scale)

    def log_eval(self, eval_loss, eval_accuracy, step=None):
        """An evaluation row at `step` (default: the steps logged so far; 0
        before the first)."""
        st = self.step if step is None else int(step)
        self.ev.append("%d,%s,%s\n" % (st, _num(float(eval_loss)), _num(float(eval_accuracy))))
        self.eval_last = (float(eval_loss), float(eval_accuracy))

    def _files(self):
        files = [("metrics.csv", "".join(self.met)), ("eval.csv", "".join(self.ev))]
        if self.bridge is not None:
            files.insert(1, ("tensors.csv", "".join(self.ten)))
        return [(n, t.encode()) for n, t in files]

    def _summary(self, files):
        wall = time.time() - self.t0
        ev = self.eval_last
        s = {
            "fpemu_version": _core.version(),
            "model": self.name,
            "policy": self.policy,
            "source": "torch",
            "gemm_backend": "libfpemu (fpemu.torch, %s)" % _core.library_path() if self.bridge is not None and
            POLICIES.get(self.policy, {}).get("kind") != "native" else "torch",
            "torch_version": torch.__version__,
            "seed": self.seed,
            "steps": self.step,
            "parameters": self.params,
            "settings": self.settings,
            "final": {
                "train_loss": _jnum(self.last["loss"]),
                "eval_loss": _jnum(ev[0]) if ev else None,
                "eval_accuracy": _jnum(ev[1]) if ev else None,
                "loss_scale": _jnum(self.last["scale"]),
                "skipped_steps": self.skipped,
            },
            "files": {n: {"bytes": len(b), "crc32": "%08x" % (zlib.crc32(b) & 0xFFFFFFFF)} for n, b in files},
            "timing": {"wall_s": round(wall, 3), "steps_per_s": round(self.step / wall, 3) if wall > 0 else 0.0,
                       "threads": torch.get_num_threads(), "resumed_at": 0},
        }
        return (json.dumps(s, indent=2, allow_nan=False) + "\n").encode()

    def flush(self):
        """Write the folder as it stands, whole: into .NAME.tmp.PID beside it,
        synced, then exchanged with the old folder in one rename (files in
        the old folder that this logger does not write are kept)."""
        files = self._files()
        files.append(("summary.json", self._summary(files)))
        parent, base = os.path.split(self.out)
        tmp = os.path.join(parent, ".%s.tmp.%d" % (base, os.getpid()))
        if os.path.exists(tmp):
            shutil.rmtree(tmp)
        os.mkdir(tmp)
        try:
            mine = {n for n, _ in files} | {"tensors.csv"}
            if os.path.isdir(self.out):  # keep what others wrote there
                for e in os.listdir(self.out):
                    if e not in mine:
                        src = os.path.join(self.out, e)
                        (shutil.copytree if os.path.isdir(src) else shutil.copy2)(src, os.path.join(tmp, e))
            for n, data in files:
                with open(os.path.join(tmp, n), "wb") as f:
                    f.write(data)
                    f.flush()
                    os.fsync(f.fileno())
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            if os.path.isdir(self.out):
                if not _renameat2_exchange(tmp, self.out):
                    old = os.path.join(parent, ".%s.old.%d" % (base, os.getpid()))
                    os.rename(self.out, old)
                    os.rename(tmp, self.out)
                    tmp = old
                shutil.rmtree(tmp)
            else:
                os.rename(tmp, self.out)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return self.out

    def close(self):
        """flush(); the folder's path."""
        return self.flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            self.close()
        return False
