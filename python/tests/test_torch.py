# SPDX-License-Identifier: MIT
"""fpemu.torch: the converted Linear's three GEMMs against fpemu.gemm and
fpemu.cast on the same inputs, bit for bit, under every policy; delayed
scaling's histories and scales against a hand computation; GradScaler;
the telemetry; the head kept in high precision; refusals. Runs where torch
is installed (tests/t_torch.sh, make test-torch)."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import fpemu  # noqa: E402
import fpemu.torch as ft  # noqa: E402
from fpemu import FpemuError  # noqa: E402

FEATS = ft.library_features()
needs_given = pytest.mark.skipif(not FEATS["given_scales"], reason="the loaded libfpemu has no gemmer scale_a/scale_b "
                                 "and fpemu_api_delayed_scale (delayed scaling; docs/torch.md)")


def bits(a):
    a = np.ascontiguousarray(np.asarray(a, np.float32))
    return a.view(np.uint32)


def same(a, b):
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    return a.shape == b.shape and np.array_equal(bits(a), bits(b))


def lo_round(x, fmt):
    return fpemu.cast(np.ascontiguousarray(x, np.float32), fmt)


def layer(cin=96, cout=40, seed=0, bias=True):
    torch.manual_seed(seed)
    return torch.nn.Linear(cin, cout, bias=bias)


def data(rows=24, cin=96, cout=40, seed=1, xscale=3.0, gscale=1e-3):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, cin, generator=g) * xscale
    gy = torch.randn(rows, cout, generator=g) * gscale
    return x, gy


def run_layer(lin, x, gy, x_grad=True):
    x = x.clone().requires_grad_(x_grad)
    y = lin(x)
    y.backward(gy)
    return y.detach().numpy(), (x.grad.numpy() if x_grad else None), lin.weight.grad.numpy(), \
        (lin.bias.grad.numpy() if lin.bias is not None else None)


# policy -> (mma, fx, fw, fy, library scaling, forward promote, backward promote, lo, sat of the casts, wgrad rounded)
EXPECT = {
    "bf16-mixed": ("h100", "bf16", "bf16", "bf16", None, 0, 0, "bf16", False, True),
    "16-mixed": ("h100", "f16", "f16", "f16", None, 0, 0, "f16", False, True),
    "bf16-true": ("h100", "bf16", "bf16", "bf16", None, 0, 0, "bf16", False, True),
    "fp8-current": ("h100", "e4m3", "e4m3", "e5m2", "tensor-torchao", 0, 128, "bf16", True, True),
    "fp8-rowwise": ("h100", "e4m3", "e4m3", "e4m3", "rowwise", 0, 128, "bf16", True, True),
    "fp8-blockwise": ("h100", "e4m3", "e4m3", "e4m3", "blockwise", 128, 128, "bf16", True, False),
    "mxfp8": ("b200", "e4m3", "e4m3", "e4m3", "mx-floor", 0, 0, "bf16", True, True),
    "nvfp4": ("b200", "e2m1", "e2m1", "e2m1", "nvfp4", 0, 0, "bf16", True, True),
}


def expected(policy, lin, x, gy, x_grad=True, **over):
    """The Linear's outputs computed here from fpemu.gemm and fpemu.cast."""
    mma, fx, fw, fy, sc, pf, pb, lo, sat, wround = EXPECT[policy]
    mma = over.get("mma", mma)
    pf, pb = over.get("pf", pf), over.get("pb", pb)
    W = lin.weight.detach().numpy()
    b = lin.bias.detach().numpy() if lin.bias is not None else None
    X = x.numpy().reshape(-1, W.shape[1])
    kw = dict(scaling=sc, sat=sat)
    d = fpemu.gemm(X, np.ascontiguousarray(W.T), model=mma, afmt=fx, bfmt=fw, promote=pf, **kw)
    if b is not None:
        d = d + lo_round(b, lo)
    y = lo_round(d, lo)
    g = lo_round(gy.numpy().reshape(-1, W.shape[0]), lo)
    gx = lo_round(fpemu.gemm(g, W, model=mma, afmt=fy, bfmt=fw, promote=pb, **kw), lo) if x_grad else None
    dw = fpemu.gemm(np.ascontiguousarray(g.T), X, model=mma, afmt=fy, bfmt=fx, promote=pb, **kw)
    gw = lo_round(dw, lo) if wround else dw
    gb = lo_round(g.sum(axis=0, dtype=np.float32), lo) if b is not None else None
    return y, gx, gw, gb


@pytest.mark.parametrize("policy", list(EXPECT))
def test_gemms_equal_library(policy):
    if policy == "fp8-blockwise" and FEATS["block_tiles"]:
        pytest.skip("this library scales the blockwise wgrad in 1x128 tiles (gemmer block_b_cols): checked below")
    lin = layer()
    ref = layer()
    x, gy = data()
    with pytest.warns(UserWarning) if policy == "fp8-blockwise" else _nothing():
        emu = ft.convert(lin, policy=policy)
    got = run_layer(emu, x, gy)
    want = expected(policy, ref, x, gy)
    for name, a, b in zip(("forward", "grad_input", "grad_weight", "grad_bias"), got, want):
        assert same(a, b), "%s %s differs from fpemu.gemm/cast" % (policy, name)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def test_32_true_is_torch():
    lin, ref = layer(), layer()
    x, gy = data()
    emu = ft.convert(lin, policy="32-true")
    for a, b in zip(run_layer(emu, x, gy), run_layer(ref, x, gy)):
        assert same(a, b)
    assert ft.telemetry(emu).rows() == []


def test_batched_input_and_no_bias():
    """(B, T, C) inputs, a Linear without bias, an input without grad."""
    lin, ref = layer(bias=False), layer(bias=False)
    x, gy = data(rows=12)
    x3, gy3 = x.view(3, 4, 96), gy.view(3, 4, 40)
    emu = ft.convert(lin, policy="fp8-current")
    y, gx, gw, gb = run_layer(emu, x3, gy3, x_grad=False)
    assert y.shape == (3, 4, 40) and gx is None and gb is None
    wy, _, wgw, _ = expected("fp8-current", ref, x, gy, x_grad=False)
    assert same(y.reshape(12, 40), wy) and same(gw, wgw)


@pytest.mark.parametrize("fast,pf,pb", [("all", 0, 0), ("none", 128, 128), ("fwd", 0, 128)])
def test_fast_accum(fast, pf, pb):
    lin, ref = layer(cin=300), layer(cin=300)
    x, gy = data(rows=260, cin=300)
    emu = ft.convert(lin, policy="fp8-current", fast_accum=fast)
    got = run_layer(emu, x, gy)
    want = expected("fp8-current", ref, x, gy, pf=pf, pb=pb)
    for a, b in zip(got, want):
        assert same(a, b)


def test_promotion_interval_and_mma():
    lin, ref = layer(cin=300), layer(cin=300)
    x, gy = data(rows=64, cin=300)
    emu = ft.convert(lin, policy="fp8-current", mma="ada", promotion_interval=64)
    for a, b in zip(run_layer(emu, x, gy), expected("fp8-current", ref, x, gy, mma="ada", pb=64)):
        assert same(a, b)


def test_fp8_scaling_none_saturates():
    lin, ref = layer(), layer()
    x, gy = data(xscale=400.0)
    emu = ft.convert(lin, policy="fp8-current", fp8_scaling="none")
    y = run_layer(emu, x, gy)[0]
    W = ref.weight.detach().numpy()
    d = fpemu.gemm(x.numpy(), np.ascontiguousarray(W.T), model="h100", afmt="e4m3", sat=True) + \
        lo_round(ref.bias.detach().numpy(), "bf16")
    assert same(y, lo_round(d, "bf16"))
    rows = {(r["cls"], r["format"]): r for r in ft.telemetry(emu).rows()}
    n_sat = int(np.sum(np.abs(x.numpy()) > 464))  # beyond e4m3's 448 (and its rounding midpoint 464)
    assert rows[("activation", "e4m3")]["saturated"] == n_sat > 0
    assert rows[("activation", "e4m3")]["scale"] == 1


def test_mx_rceil_and_hybrid():
    lin, ref = layer(cin=64), layer(cin=64)
    x, gy = data(cin=64)
    emu = ft.convert(lin, policy="mxfp8", mx_scale_rule="rceil", fp8_format="HYBRID")
    got = run_layer(emu, x, gy)
    W = ref.weight.detach().numpy()
    X = x.numpy()
    kw = dict(model="b200", scaling="mx-rceil")
    y = lo_round(fpemu.gemm(X, np.ascontiguousarray(W.T), afmt="e4m3", **kw) + lo_round(ref.bias.detach().numpy(), "bf16"), "bf16")
    g = lo_round(gy.numpy(), "bf16")
    gx = lo_round(fpemu.gemm(g, W, afmt="e5m2", bfmt="e4m3", **kw), "bf16")
    assert same(got[0], y) and same(got[1], gx)


@pytest.mark.skipif(not FEATS["scale_min"], reason="the loaded libfpemu has no gemmer telemetry scale_min_a/scale_min_b")
@pytest.mark.parametrize("policy,kw,fmt,scaling", [("mxfp8", dict(mx_scale_rule="rceil"), "e4m3", "mx-rceil"),
                                                   ("nvfp4", {}, "e2m1", "nvfp4")])
def test_block_recipe_telemetry_scale_is_the_smallest(policy, kw, fmt, scaling):
    """The scale column of a per-block recipe is the operand's smallest
    encode scale, as fpemu train writes it (the library's scale_min_a /
    scale_min_b): the activation's over the forward's blocks along
    in_features and the weight gradient's along the batch, the weight's
    along in_features; here from cast_stats' largest decode scale (MX:
    2^(127-E) = 1 / 2^(E-127); NVFP4: the tensor scale over the block
    scale, in f32)."""
    lin = ft.convert(layer(cin=64), policy=policy, **kw)
    x, gy = data(cin=64)
    run_layer(lin, x, gy)
    rows = {(r["cls"], r["format"]): r for r in ft.telemetry(lin).rows()}

    def least(a):
        st = fpemu.cast_stats(np.ascontiguousarray(a), fmt, scaling=scaling)
        top = np.float32(st["block_scales"]["max"])
        return float((np.float32(st["tensor_scale"]) if scaling == "nvfp4" else np.float32(1)) / top)

    X, W = x.numpy(), lin.weight.detach().numpy()
    assert rows[("activation", fmt)]["scale"] == min(least(X), least(X.T)) != 1
    assert rows[("weight", fmt)]["scale"] == least(W) != 1


# ---- the head -------------------------------------------------------------------------------------------


def mlp(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(96, 64), torch.nn.ReLU(), torch.nn.Linear(64, 40))


def test_head_kept_high_precision():
    x, gy = data()
    m = ft.convert(mlp(), policy="fp8-current", fp8_head=0)
    assert not m[0].hp and m[2].hp
    h = torch.relu(m[0](x)).detach()
    ref = mlp()
    got = run_layer(m[2], h, gy)
    # the head as bf16-mixed computes it: no recipe, bf16 casts, f32 accumulation
    want = expected("bf16-mixed", ref[2], h, gy)
    for a, b in zip(got, want):
        assert same(a, b)
    fmts = {(r["layer"], r["cls"]): r["format"] for r in ft.telemetry(m).rows()}
    assert fmts[("0", "activation")] == "e4m3" and fmts[("2", "activation")] == "bf16"


def test_blockwise_head_default_and_named_head():
    with pytest.warns(UserWarning) if not FEATS["block_tiles"] else _nothing():
        m = ft.convert(mlp(), policy="fp8-blockwise")
    assert m[2].hp and not m[0].hp
    m = ft.convert(mlp(), policy="fp8-current", fp8_head=0, head="0")
    assert m[0].hp and not m[2].hp
    with pytest.raises(FpemuError, match="head 'x'"):
        ft.convert(mlp(), policy="fp8-current", head="x")


# ---- delayed scaling ------------------------------------------------------------------------------------


def f32(v):
    return float(np.asarray(v, np.float32).reshape(-1)[0])


def te_scale(amax, fmt_max, margin, prev):
    """TE's rule, by hand: fl32(fmt_max * 2^-margin) / amax in f32, prev for 0, inf, NaN."""
    if not (math.isfinite(amax) and amax > 0):
        return prev
    s = np.float32(np.float32(fmt_max) * np.float32(2.0 ** -margin)) / np.float32(amax)
    return float(s) if math.isfinite(s) else float(np.finfo(np.float32).max)


@needs_given
@pytest.mark.parametrize("algo", ["max", "most_recent"])
def test_delayed_history_and_scales(algo):
    hl, margin = 3, 1
    lin = ft.convert(layer(cin=32, cout=8), policy="fp8-delayed", amax_history_len=hl, margin=margin,
                     amax_compute_algo=algo)
    W = lin.weight.detach().numpy()
    wmax = f32(np.abs(W).max())
    amaxes = [2.0, 7.5, 0.5, 3.0, 0.0, 1.25]
    hist = {"x": [0.0] * hl, "w": [0.0] * hl, "dy": [0.0] * hl}
    scale = {"x": 1.0, "w": 1.0, "dy": 1.0}
    fmax = {"x": 448.0, "w": 448.0, "dy": 57344.0}
    for k, a in enumerate(amaxes):
        x = torch.full((4, 32), a)
        x[0, 0] = -a
        gy = torch.full((4, 8), a / 100)
        st = ft.delayed_state(lin)
        for r in hist:  # the scales the step's GEMMs take: from the steps before
            assert st[r]["scale"] == scale[r], (k, r, st[r]["scale"], scale[r])
        y = lin(x)
        y.backward(gy)
        cur = {"x": f32(a), "w": wmax, "dy": f32(lo_round(np.float32(a / 100), "bf16"))}
        st = ft.delayed_state(lin)
        for r in hist:
            assert st[r]["cur"] == cur[r]
        # the next training forward ends the step: the history rolls, then TE's rule
        for r in hist:
            hist[r] = [cur[r]] + hist[r][:-1]
            am = hist[r][0] if algo == "most_recent" else max(hist[r])
            scale[r] = te_scale(am, fmax[r], margin, scale[r])
        lin(torch.zeros(1, 32))  # a training forward: the update, then zeros recorded
        st = ft.delayed_state(lin)
        for r in hist:
            assert list(st[r]["hist"]) == hist[r]
            assert st[r]["scale"] == scale[r]
        lin.zero_grad()
        # a forward without grad (evaluation) records nothing
        with torch.no_grad():
            lin(torch.full((1, 32), 1e6))
        assert ft.delayed_state(lin)["x"]["cur"] == 0.0
        lin._ds_pending = False  # the zeros forward above is not a step of this test


@needs_given
def test_delayed_forward_equals_given_scales():
    """The forward GEMM under delayed scaling: the library's given-scale GEMM,
    here composed by hand from scaling none on pre-scaled inputs (exact for
    the fast forward): D = fl32(acc * fl32(fl32(1/sa) * fl32(1/sb)))."""
    lin = ft.convert(layer(cin=64, cout=16, bias=False), policy="fp8-delayed", amax_history_len=4)
    x, gy = data(rows=8, cin=64, cout=16)
    lin(x).backward(gy)          # step 1: scale 1
    x2 = x * 0.5
    lin(x2 * 0)                  # ends step 1 (zeros: amax 0 keeps nothing new)
    lin.zero_grad()
    st = ft.delayed_state(lin)
    sa, sb = np.float32(st["x"]["scale"]), np.float32(st["w"]["scale"])
    assert sa != 1 and sb != 1
    y = lin(x2).detach().numpy()
    W = lin.weight.detach().numpy()
    acc = fpemu.gemm(x2.numpy() * sa, np.ascontiguousarray(W.T) * sb, model="h100", afmt="e4m3", sat=True)
    dq = np.float32(np.float32(1) / sa) * np.float32(np.float32(1) / sb)
    assert same(y, lo_round(acc * np.float32(dq), "bf16"))


def test_delayed_refused_without_library_support():
    if FEATS["given_scales"]:
        pytest.skip("the loaded libfpemu has the given-scale options")
    with pytest.raises(FpemuError, match="delayed scaling needs"):
        ft.convert(layer(), policy="fp8-delayed")
    # fp8_scaling=none needs no scales
    ft.convert(layer(), policy="fp8-delayed", fp8_scaling="none")


# ---- GradScaler --------------------------------------------------------------------------------------------


def test_gradscaler_skips_inf_and_steps_otherwise():
    torch.manual_seed(0)
    m = ft.convert(mlp(), policy="16-mixed")
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 10, growth_interval=1000)
    x, _ = data()
    target = torch.zeros(24, 40)

    def step(inp):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(m(inp), target)
        before = scaler.get_scale()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return before, scaler.get_scale()

    w0 = m[0].weight.detach().clone()
    before, after = step(x)
    assert before == after == 2.0 ** 10 and not torch.equal(w0, m[0].weight)
    w1 = m[0].weight.detach().clone()
    bad = x.clone()
    bad[3, 5] = float("inf")
    before, after = step(bad)
    assert after == before / 2 and torch.equal(w1, m[0].weight)  # skipped, backed off
    # f16 overflow of the scaled gradients (the grad_output cast) skips too
    scaler.update(new_scale=2.0 ** 40)
    before, after = step(x * 100)
    assert after == before / 2 and torch.equal(w1, m[0].weight)
    assert any(r["cls"] == "grad_output" and r["overflow"] > 0 for r in ft.telemetry(m).rows())


# ---- telemetry ------------------------------------------------------------------------------------------------


def test_telemetry_rows_match_library_figures():
    lin = ft.convert(layer(), policy="fp8-current")
    x, gy = data()
    run_layer(lin, x, gy)
    rows = ft.telemetry(lin).rows()
    key = [(r["cls"], r["format"]) for r in rows]
    assert key == [("activation", "e4m3"), ("weight", "e4m3"), ("weight", "bf16"), ("output", "bf16"),
                   ("grad_output", "bf16"), ("grad_output", "e5m2"), ("grad_input", "bf16"), ("grad_weight", "bf16")]
    r = {k: v for k, v in zip(key, rows)}
    xs = fpemu.cast_stats(x.numpy(), "e4m3", scaling="tensor-torchao")
    a = r[("activation", "e4m3")]
    assert a["n"] == x.numel() and a["amax"] == xs["amax"] and a["scale"] == xs["scale"]
    assert (a["overflow"], a["saturated"], a["underflow"], a["subnormal"]) == (xs["overflow"], xs["saturated"],
                                                                           xs["flushed"], xs["subnormal"])
    W = lin.weight.detach().numpy()
    ws = fpemu.cast_stats(W, "e4m3", scaling="tensor-torchao")
    assert r[("weight", "e4m3")]["n"] == W.size and r[("weight", "e4m3")]["scale"] == ws["scale"]
    assert r[("weight", "bf16")]["n"] == 40 and r[("output", "bf16")]["n"] == 24 * 40
    assert r[("grad_weight", "bf16")]["n"] == W.size + 40
    gs = fpemu.cast_stats(gy.numpy(), "bf16")
    assert r[("grad_output", "bf16")]["subnormal"] == gs["subnormal"]
    casts, of, uf = ft.telemetry(lin).totals()
    assert casts == sum(v["n"] for v in rows)
    assert uf == sum(v["underflow"] for v in rows) / casts
    ft.telemetry(lin).clear()
    assert ft.telemetry(lin).rows() == [] and ft.telemetry(lin).totals() == (0, 0.0, 0.0)


def test_telemetry_not_counted_in_eval():
    m = ft.convert(mlp(), policy="bf16-mixed")
    x, _ = data()
    with torch.no_grad():
        m(x)
    m.eval()
    m(x)
    assert ft.telemetry(m).rows() == []


def test_threads_do_not_change_results():
    x, gy = data(rows=300, cin=200, cout=300)
    outs = []
    for t in (1, 2, 0):
        lin = ft.convert(layer(cin=200, cout=300), policy="fp8-current", threads=t)
        outs.append(run_layer(lin, x, gy))
    for o in outs[1:]:
        for a, b in zip(o, outs[0]):
            assert same(a, b)


# ---- convert ------------------------------------------------------------------------------------------------------


def test_convert_keeps_parameters_and_state_dict():
    m = mlp()
    params = [id(p) for p in m.parameters()]
    sd = {k: v.clone() for k, v in m.state_dict().items()}
    opt = torch.optim.SGD(m.parameters(), lr=0.1)  # built before convert: still updates the layers
    m = ft.convert(m, policy="bf16-mixed")
    assert [id(p) for p in m.parameters()] == params
    assert m.state_dict().keys() == sd.keys()
    x, _ = data()
    m(x).sum().backward()
    opt.step()
    assert not torch.equal(sd["0.weight"], m[0].weight)
    assert isinstance(m[0], ft.EmuLinear) and "bf16-mixed" in repr(m)
    with pytest.raises(FpemuError, match="already converted"):
        ft.convert(m, policy="bf16-mixed")


@pytest.mark.parametrize("kw,msg", [
    (dict(policy="fp16"), "unknown policy 'fp16'"),
    (dict(policy="msamp-o1"), "MS-AMP"),
    (dict(policy="int8-dynamic"), "quantize_dynamic"),
    (dict(policy="fp8-current", lr=1e-3), "lr: a setting of fpemu train's own training loop"),
    (dict(policy="fp8-current", nope=1), "unknown setting 'nope'"),
    (dict(policy="fp8-current", fp8_format="E5M2"), "fp8_format='E5M2'"),
    (dict(policy="fp8-current", amax_history_len=0), r"amax_history_len=0: expected an integer in \[1, 65536\]"),
    (dict(policy="fp8-blockwise", block_size=64), "block_size=64"),
    (dict(policy="mxfp8", block_size=16), "block_size=16"),
    (dict(policy="fp8-blockwise", promotion_interval=32), "promotion_interval=32"),
    (dict(policy="fp8-current", mma="nosuch"), "mma nosuch"),
    (dict(policy="bf16-mixed", mma="v100"), "mma v100"),
    (dict(policy="fp8-current", fast_accum="some"), "fast_accum='some'"),
])
def test_refusals(kw, msg):
    with pytest.raises(FpemuError, match=msg):
        ft.convert(mlp(), **kw)


def test_power_2_scale():
    if FEATS["pow2"]:
        ft.convert(layer(), policy="fp8-current", power_2_scale=1)
    else:
        with pytest.raises(FpemuError, match="option 'pow2'"):
            ft.convert(layer(), policy="fp8-current", power_2_scale=1)


@pytest.mark.skipif(not FEATS["block_tiles"], reason="the loaded libfpemu has no gemmer block_b_cols")
def test_blockwise_wgrad_tiles():
    """DeepSeek-V3's wgrad: both operands in 1x128 tiles along K (the batch)."""
    lin, ref = layer(cin=160, cout=136), layer(cin=160, cout=136)
    x, gy = data(rows=200, cin=160, cout=136)
    emu = ft.convert(lin, policy="fp8-blockwise")
    got = run_layer(emu, x, gy)
    want = expected("fp8-blockwise", ref, x, gy)
    for a, b in zip(got[:2], want[:2]):
        assert same(a, b)
    assert not same(got[2], want[2])  # the 128x128 blocks of the plain library GEMM differ


def test_filter_and_multihead_attention():
    torch.manual_seed(0)
    m = torch.nn.ModuleDict({"att": torch.nn.MultiheadAttention(16, 2), "fc": torch.nn.Linear(16, 16),
                             "out": torch.nn.Linear(16, 4)})
    ft.convert(m, policy="bf16-mixed", filter=lambda name, mod: name != "out")
    assert type(m["att"].out_proj) is not ft.EmuLinear  # MultiheadAttention reads its weight, never calls it
    assert isinstance(m["fc"], ft.EmuLinear) and type(m["out"]) is torch.nn.Linear
    x = torch.randn(5, 1, 16)
    m["att"](x, x, x)  # still works


def test_deepcopy_and_pickle():
    import copy
    import io
    m = ft.convert(mlp(), policy="fp8-current")
    x, _ = data()
    c = copy.deepcopy(m)
    assert torch.equal(c(x), m(x))
    buf = io.BytesIO()
    torch.save(m, buf)
    buf.seek(0)
    m2 = torch.load(buf, weights_only=False)
    assert torch.equal(m2(x), m(x)) and isinstance(m2[0], ft.EmuLinear)
