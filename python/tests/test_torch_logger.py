# SPDX-License-Identifier: MIT
"""fpemu.torch.RunLogger: a run folder from a PyTorch loop that `fpemu
report` and `fpemu drift` read (the programs are run), with fpemu train's
columns; and the example examples/torch_bridge.py in a 5-step version."""
import gzip
import json
import os
import subprocess
import sys
import zlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import fpemu.torch as ft  # noqa: E402
from fpemu import FpemuError, twins  # noqa: E402
from conftest import BIN, ROOT, run_cli  # noqa: E402

F = torch.nn.functional
os.environ.setdefault("FPEMU_ROOT", str(ROOT))  # where `fpemu train` and `fpemu report` find their data and scripts
DIGITS = ROOT / "experiments" / "data" / "digits.csv.gz"


@pytest.fixture(scope="module")
def digits():
    with gzip.open(DIGITS, "rt") as f:
        a = np.loadtxt(f, delimiter=",", dtype=np.float32)
    return torch.from_numpy(a[:, :64] / 16), torch.from_numpy(a[:, 64].astype(np.int64))


def train(out, policy, digits, steps=12, name="mlp-digits", scaler=None, **kw):
    """The mlp-digits twin (fpemu train's model in PyTorch) through the bridge."""
    x, y = digits
    torch.manual_seed(3)
    m = ft.convert(twins.make_model("mlp-digits"), policy=policy, **kw)
    opt = torch.optim.AdamW(m.parameters(), lr=3e-3)
    log = ft.RunLogger(out, model=m, name=name, seed=3, tensors_every=5)
    for s in range(steps):
        xb, yb = x[s * 32:(s + 1) * 32], y[s * 32:(s + 1) * 32]
        loss = F.cross_entropy(m(xb), yb)
        opt.zero_grad()
        if scaler is None:
            loss.backward()
            gn = ft.grad_norm(m.parameters())
            opt.step()
            log.log_step(loss, grad_norm=gn, lr=3e-3)
        else:
            scale = scaler.get_scale()
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            gn = ft.grad_norm(m.parameters())
            scaler.step(opt)
            scaler.update()
            log.log_step(loss, grad_norm=gn, loss_scale=scale, skipped=scaler.get_scale() < scale, lr=3e-3)
    m.eval()
    with torch.no_grad():
        out_e = m(x[1500:])
    log.log_eval(F.cross_entropy(out_e, y[1500:]).item(), (out_e.argmax(1) == y[1500:]).float().mean().item())
    return log.close(), log


@pytest.fixture(scope="module")
def runs(tmp_path_factory, digits):
    d = tmp_path_factory.mktemp("runs")
    out = {}
    for p in ("32-true", "fp8-current"):
        out[p] = train(str(d / p), p, digits)[0]
    sc = torch.amp.GradScaler("cpu", init_scale=2.0 ** 30)
    out["16-mixed"] = train(str(d / "16-mixed"), "16-mixed", digits, scaler=sc)[0]
    return d, out


def header(path):
    with open(path) as f:
        return f.readline()


def test_columns_are_fpemu_trains(runs, tmp_path):
    d, out = runs
    run_cli("train", "--model", "mlp-digits", "--policy", "fp8-current", "--steps", "1", "--out", tmp_path / "t", "--quiet")
    for f in ("metrics.csv", "tensors.csv", "eval.csv"):
        assert header(os.path.join(out["fp8-current"], f)) == header(tmp_path / "t" / f), f
    js = json.load(open(tmp_path / "t" / "summary.json"))
    mine = json.load(open(os.path.join(out["fp8-current"], "summary.json")))
    for k in ("fpemu_version", "model", "policy", "seed", "steps", "parameters", "settings", "final", "files", "timing"):
        assert k in mine, k
    assert set(js["final"]) == set(mine["final"])
    assert mine["model"] == "mlp-digits" and mine["policy"] == "fp8-current" and mine["source"] == "torch"
    assert mine["parameters"] == js["parameters"] and mine["steps"] == 12


def test_files_listed_with_crc(runs):
    _, out = runs
    d = out["fp8-current"]
    js = json.load(open(os.path.join(d, "summary.json")))
    assert set(js["files"]) == {"metrics.csv", "tensors.csv", "eval.csv"}
    for n, meta in js["files"].items():
        b = open(os.path.join(d, n), "rb").read()
        assert meta == {"bytes": len(b), "crc32": "%08x" % zlib.crc32(b)}
    assert not [e for e in os.listdir(os.path.dirname(d)) if e.startswith(".")]  # no temporary folder left


def test_values_read_back_exactly(runs, digits):
    _, out = runs
    lines = open(os.path.join(out["16-mixed"], "metrics.csv")).read().splitlines()
    assert len(lines) == 13
    rows = [l.split(",") for l in lines[1:]]
    assert [int(r[0]) for r in rows] == list(range(1, 13))
    for r in rows:
        for v in (r[1], r[2], r[3]):
            assert "%.9g" % float(np.float32(float(v))) == v or v in ("nan", "inf")
    # GradScaler at 2^30: f16 overflows, steps skipped, the scale backs off
    f32 = lambda v: np.float32(float(v))  # noqa: E731
    assert int(rows[0][4]) == 1 and f32(rows[0][3]) == 2.0 ** 30 and f32(rows[1][3]) == 2.0 ** 29
    assert float(rows[0][5]) > 0  # the overflow fraction of the step's casts
    js = json.load(open(os.path.join(out["16-mixed"], "summary.json")))
    assert js["final"]["skipped_steps"] == sum(int(r[4]) for r in rows) > 0


def test_tensors_rows(runs):
    _, out = runs
    lines = open(os.path.join(out["fp8-current"], "tensors.csv")).read().splitlines()[1:]
    steps = sorted({int(l.split(",")[0]) for l in lines})
    assert steps == [1, 5, 10]
    first = [l.split(",") for l in lines if l.startswith("1,")]
    layers = []
    for r in first:
        if r[1] not in layers:
            layers.append(r[1])
    assert layers == ["0", "2", "4"]  # the twin's Linears, in model order
    assert ["0", "activation", "e4m3", str(32 * 64)] == first[0][1:5]
    assert not open(os.path.join(out["32-true"], "tensors.csv")).read().splitlines()[1:]


def test_report_and_drift_read_the_folders(runs, tmp_path):
    d, out = runs
    env = dict(os.environ, FPEMU_ROOT=str(ROOT))
    r = subprocess.run([BIN, "report", "--out", str(tmp_path / "rep"), out["32-true"], out["fp8-current"], out["16-mixed"]],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    summ = open(tmp_path / "rep" / "summary.csv").read()
    for p in ("32-true", "fp8-current", "16-mixed"):
        assert "," + p + "," in summ
    assert (tmp_path / "rep" / "index.html").exists()
    r = run_cli("drift", out["fp8-current"], out["fp8-current"], check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_cli("drift", out["32-true"], out["fp8-current"], check=False)
    assert r.returncode == 1 and "DRIFT" in r.stdout


def test_report_of_a_model_fpemu_does_not_train(digits, tmp_path):
    """A user's own model: `fpemu report` and `fpemu drift` read its run
    folders (the report does not need to train the model)."""
    a = train(str(tmp_path / "a"), "32-true", digits, steps=3, name="my-net")[0]
    b = train(str(tmp_path / "b"), "bf16-mixed", digits, steps=3, name="my-net")[0]
    assert run_cli("drift", a, a, check=False).returncode == 0
    env = dict(os.environ, FPEMU_ROOT=str(ROOT))
    r = subprocess.run([BIN, "report", "--out", str(tmp_path / "rep"), a, b], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr


def test_flush_is_whole_and_keeps_foreign_files(digits, tmp_path):
    out = tmp_path / "r"
    path, log = train(str(out), "bf16-mixed", digits, steps=2)
    (out / "notes.txt").write_text("mine\n")
    log.log_step(1.5)
    log.flush()
    assert (out / "notes.txt").read_text() == "mine\n"
    assert len(open(out / "metrics.csv").read().splitlines()) == 4
    assert not [e for e in os.listdir(tmp_path) if e.startswith(".")]
    (tmp_path / "ck").mkdir()
    (tmp_path / "ck" / "checkpoint.bin").write_bytes(b"x")
    with pytest.raises(FpemuError, match="checkpoint.bin"):
        ft.RunLogger(str(tmp_path / "ck"), model="m", policy="32-true")
    with pytest.raises(FpemuError, match="step 5"):
        log.log_step(1.0, step=5)


def test_example_five_steps(tmp_path):
    """examples/torch_bridge.py, 5 steps of each policy: four run folders and
    the report."""
    ex = ROOT / "examples" / "torch_bridge.py"
    env = dict(os.environ, FPEMU_BIN=BIN, PYTHONPATH=str(ROOT / "python"))
    r = subprocess.run([sys.executable, str(ex), "--steps", "5", "--eval-every", "5", "--out", str(tmp_path / "runs")],
                       capture_output=True, text=True, env=env, timeout=600)
    for p in ("32-true", "bf16-mixed", "fp8-current", "mxfp8"):
        d = tmp_path / "runs" / p
        assert len(open(d / "metrics.csv").read().splitlines()) == 6, r.stdout + r.stderr
        assert json.load(open(d / "summary.json"))["policy"] == p
    assert "fp8-current" in r.stdout
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "runs" / "report" / "index.html").exists()
