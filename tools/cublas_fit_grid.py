# SPDX-License-Identifier: MIT
"""Fit table rows for a record_cublas.py grid: pair-probe fit, then the random cases decide.

    python3 tools/cublas_fit_grid.py REC_DIR WORK_DIR [--fpemu bin/fpemu] [--dtypes f32,tf32,...]

1. Per dtype, the shapes whose pair-probe answers (out_{dt}_{shape}_i*) are equal, array for
   array, share one fit: WORK_DIR/{dt}.npz keeps one shape per set of answers (the smallest
   M x N at each K), WORK_DIR/rep.json says which shape stands for which.
2. `fpemu gemm --model h100 --afmt DT --pairs WORK_DIR/{dt}.npz` fits them (the probe's fit,
   docs/cublas.md); its output goes to WORK_DIR/{dt}.txt, which a later run reuses when it is
   complete (one status= line per shape).
3. For every recorded random case of every shape (tools/cublas_share.py's calls), each tree that
   fits the pair answers is tried as a one-row table, in the fitter's order, with the output's
   variant (f16/bf16: out=; e4m3 bf16 output: out=bf16; e4m3 fast1: chunk=0, pair probes
   being recorded with fast0); the first that gives every recorded output bit for bit is the
   row (status=gemm). red0 (reduced-precision reduction off) has no row of its own (the native
   row serves, run with --no-reduced-precision-reduction, which drops partial_fmt): it is
   reported, not fitted.

--emit TABLE prints the rows found (every rows-*.txt of WORK_DIR) as a table section for TABLE:
comments off, fp8 partitions of 128 written as chunk=128 (the same tree), keys TABLE already has
left out (named on stderr).

Prints the rows (WORK_DIR/rows-DTYPES.txt) and, per shape and output, why there is none
(WORK_DIR/left-DTYPES.txt): the pair fit found no tree ("unresolved"), or none of the trees that fit
gives the random outputs ("pairs fit, random outputs differ: best e/t"). Needs NumPy.
"""
import argparse
import collections
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cublas_pairs_check  # noqa: E402
import cublas_share  # noqa: E402

HEADER = ("fpemu_sumtree_table = 1\nname = cublas-h200\nstands_for = candidate\n")
DEFAULTS = {"block": "0", "chain": "preset", "chunk": "0", "layout": "contiguous", "reduce": "seq",
            "reduce_fmt": "f32", "partial_fmt": "f32", "c": "epilogue", "alpha": "1", "beta": "1", "out": "f32",
            "operands": "input"}


def dedup(rec, work, dt):
    z = np.load(os.path.join(rec, "cublas-%s.npz" % dt))
    sh = collections.defaultdict(list)
    for k in z.files:
        m = re.fullmatch(r"out_\w+?_(\d+x\d+x(\d+))_i(\d+)", k)
        if m:
            sh[m.group(1)].append(k)
    seen, rep, out = {}, {}, {k: z[k] for k in z.files if k.startswith("pair_")}
    for s in sorted(sh, key=lambda s: (int(s.split("x")[2]), int(s.split("x")[0]))):
        ks = sorted(sh[s], key=lambda k: int(k.split("_i")[-1]))
        key = (s.split("x")[2], hashlib.md5(b"".join(z[k].tobytes() for k in ks)).hexdigest())
        if key in seen:
            rep[s] = seen[key]
            continue
        seen[key] = rep[s] = s
        out.update({k: z[k] for k in ks})
    np.savez(os.path.join(work, dt + ".npz"), **out)
    return rep


def read_fits(path):
    """shape -> (status, [tree text, ...]) from `fpemu gemm --pairs`'s output."""
    fits, cur = {}, None
    for line in open(path):
        if line.startswith("shape="):
            cur = line.split()[0][6:]
            fits[cur] = [None, []]
        elif line.startswith("status=") and cur:
            fits[cur][0] = line.split()[0][7:]
        elif line.startswith("fits ") and cur:
            fits[cur][1].append(line[5:].strip())
    return {s: v for s, v in fits.items() if v[0]}


def compact(tree, **over):
    kv = dict(t.split("=", 1) for t in tree.split())
    kv.update(over)
    if kv.get("split") == "1":
        kv.pop("split"), kv.pop("unit", None), kv.pop("layout", None), kv.pop("reduce", None), kv.pop("reduce_fmt", None)
    return " ".join("%s=%s" % (k, v) for k, v in kv.items() if DEFAULTS.get(k) != v)


PROBE_KIND = ("f32out", "f32", "fast0")
PROBE_KIND_OF = {"f32": "f32", "tf32": "f32", "f16": "f32out", "bf16": "f32out", "e4m3": "fast0"}


def selector(dt, kind):
    if dt in ("f32", "tf32"):
        return "a=%s d=f32" % dt
    if dt in ("f16", "bf16"):
        return "a=%s d=%s" % (dt, "f32" if kind == "f32out" else dt)
    return "a=e4m3 d=%s fast=%s" % ("bf16" if kind == "bf16out" else "f32", "1" if kind == "fast1" else "0")


def n_variants(kind, t):
    """How many of the derived kind's candidates are variants of the probe kind's tree."""
    return 3 if "split=" in t and kind in ("native", "red0") else 2 if kind == "fast1" else 1


def search_space(dt, kind, K):
    """Trees to try when the pair fit gives none that reproduces the random outputs: splits of
    tiles of 64, 128, 32, 8, 16 (tf32: and 4; each cut of K once), with each partition padded at
    the front to a multiple of the leaf block (kpad: 16, tf32 8) when K is not a multiple of it,
    in order of size; for f16/bf16 all of them again with blocks of 8. tf32, f16 and bf16 also
    try each partition's leftover products first in a k-tile of 16 or 32 filled with zeros at
    its end (kres: CUTLASS's s1688 kernels, whose tiles are longer than the leaf block of 8).
    tf32 tries every split up to 128 partitions, then splits of 4 to 128 partitions added as a
    pairwise tree, and last the f32 SIMT kernel on the unrounded f32 data (operands=f32), which
    cuBLAS runs for some tf32 calls. f32 tries each split also
    with its tiles dealt out in turn (layout=interleaved: the SIMT kernels' split-K over
    k-tiles of 8)."""
    leaves = ["leaf=fma-seq"] if dt == "f32" else ["leaf=h100", "leaf=h100 block=8"] if dt in ("f16", "bf16") else ["leaf=h100"]
    extra = (" chunk=128" if kind in ("fast0", "bf16out") else "") + (" out=%s" % dt if dt in ("f16", "bf16") and kind != "f32out" else "") + (
        " out=bf16" if kind == "bf16out" else "")
    seen = set()
    blk = 8 if dt == "tf32" else 16
    pads = [""] + ([" kpad=%d" % blk] if K % blk and dt != "f32" else [])
    splits = list(range(1, 33)) + [48, 64, 96, 128, 192, 256]
    units = (64, 128, 32, 8, 16)
    if dt in ("tf32", "f16", "bf16"):
        pads += [" kres=%d" % t for t in (16, 32) if K % t]
    if dt == "tf32":
        splits = list(range(1, 129)) + [192, 256]
        units += (4,)
    layouts = ["", " layout=interleaved"] if dt == "f32" else [""]
    for leaf, pad in [(lf, p) for lf in leaves for p in pads]:
        for S in splits:
            for U in units:
                T = -(-K // U)
                per = -(-T // S)
                cut = tuple(min(per * U * (q + 1), K) for q in range(-(-T // per)))
                if S > 1 and len(cut) != S:
                    continue
                for lay in layouts if S > 1 and T > S else [""]:
                    key = (leaf, pad, cut if not lay else (S, U))
                    if key in seen:
                        continue
                    seen.add(key)
                    yield (leaf + ("" if S == 1 else " split=%d unit=%d" % (S, U)) + lay + extra + pad).strip()
    if dt == "tf32":  # the partitions added as a pairwise tree (Hopper's segment-k kernels, all tiles split)
        for S in range(4, 129):
            for U in (64, 32):
                if -(-K // U) >= S:
                    yield "leaf=h100 split=%d unit=%d reduce=pairwise" % (S, U)
    if dt == "tf32":
        yield "leaf=fma-seq operands=f32"


def row_key(line):
    kv = dict(t.split("=", 1) for t in line.split("#")[0].split() if "=" in t)
    return (kv.get("a"), kv.get("b", kv.get("a")), kv.get("d", "f32"), kv.get("fast"), kv.get("m"), kv.get("n"), kv.get("k"))


def emit(work, table):
    """The grid's rows as a table section: rows-*.txt of WORK_DIR without their comments, fp8
    partitions of 128 products reduced in order in f32 written as the promotion they equal
    (chunk=128), rows whose key the table already has left out (and listed on stderr)."""
    have = {}
    for n, line in enumerate(open(table), 1):
        if "=" in line and not line.startswith("#") and " = " not in line:
            have[row_key(line)] = (n, line.strip())
    out, mine = collections.defaultdict(list), {}
    for f in sorted(os.listdir(work)):
        if not (f.startswith("rows-") and f.endswith(".txt")):
            continue
        for line in open(os.path.join(work, f)):
            line = line.split("#")[0].strip()
            if not line:
                continue
            kv = dict(t.split("=", 1) for t in line.split())
            if kv["a"] == "e4m3" and kv.get("split") and kv.get("unit") == "64" and "reduce" not in kv and "reduce_fmt" not in kv:
                T = -(-int(kv["k"]) // 64)
                if -(-T // int(kv["split"])) == 2:
                    line = line.replace(" split=%s unit=64" % kv["split"], " chunk=128")
            key = row_key(line)
            if key in mine:  # a later run over some shapes again (--shapes): one row per key
                if mine[key] != line:
                    print("two rows for %s: %s / %s (the first kept)" % (key, mine[key], line), file=sys.stderr)
                continue
            mine[key] = line
            if key in have:
                print("line %d already has %s: %s (grid: %s)" % (have[key][0], key, have[key][1], line), file=sys.stderr)
                continue
            out[(kv["a"], kv.get("d", "f32"), kv.get("fast", ""))].append(line)
    for k in sorted(out, key=lambda k: (["f16", "bf16", "e4m3", "tf32", "f32"].index(k[0]), k[1] != "f32", k[2])):
        print("# %s -> %s%s" % (k[0], k[1], " fast=%s" % k[2] if k[2] else ""))
        for line in sorted(out[k], key=lambda l: tuple(int(dict(t.split("=") for t in l.split())[x]) for x in "mnk")):
            print(line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rec")
    ap.add_argument("work")
    ap.add_argument("--fpemu", default="bin/fpemu")
    ap.add_argument("--dtypes", default="f32,tf32,f16,bf16,e4m3")
    ap.add_argument("--partial", action="store_true", help="use WORK_DIR/{dt}.txt as it is, even incomplete")
    ap.add_argument("--shapes", default="", help="MxNxK,...: only these shapes (rows-DTYPES-shapes.txt)")
    ap.add_argument("--emit", metavar="TABLE", help="print WORK_DIR's rows as a section for TABLE (no fitting)")
    args = ap.parse_args()
    if args.emit:
        return emit(args.work, args.emit)
    os.makedirs(args.work, exist_ok=True)
    rows, left = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for dt in args.dtypes.split(","):
            rep = dedup(args.rec, args.work, dt)
            ftxt = os.path.join(args.work, dt + ".txt")
            fits = read_fits(ftxt) if os.path.exists(ftxt) else {}
            if not args.partial and not set(rep.values()) <= set(fits):
                with open(ftxt, "w") as f:
                    subprocess.run([args.fpemu, "gemm", "--model", "h100", "--afmt", dt, "--pairs",
                                    os.path.join(args.work, dt + ".npz")], stdout=f, check=True)
                fits = read_fits(ftxt)
            z = np.load(os.path.join(args.rec, "cublas-%s.npz" % dt))
            cases = {}
            for key in z.files:
                m = re.fullmatch(r"D_(\w+?)_(\w+)_(\d+x\d+x\d+)", key)
                if m and m.group(1) == dt:
                    cases.setdefault(m.group(3), []).append(m.group(2))
            for shape in sorted(cases, key=lambda s: tuple(int(x) for x in s.split("x"))):
                if args.shapes and shape not in args.shapes.split(","):
                    continue
                kinds = sorted(cases[shape], key=lambda k: k not in PROBE_KIND)  # the pair probes' kind first
                M, N, K = shape.split("x")
                base = "m=%s n=%s k=%s" % (M, N, K)
                probe_tree, why = None, ""
                for kind in kinds:
                    sel = selector(dt, kind)

                    def ok(c):
                        tab = os.path.join(tmp, "t.txt")
                        with open(tab, "w") as f:
                            f.write(HEADER + "%s %s status=gemm %s\n" % (sel, base, c))
                        r = cublas_share.one_call((args.fpemu, tab, tmp, dt, None, kind, shape, z["A_%s_%s" % (dt, shape)],
                                                   z["B_%s_%s" % (dt, shape)], z["D_%s_%s_%s" % (dt, kind, shape)]))
                        if r[4] is None:
                            print("error: %s %s %s %s: %s" % (dt, kind, shape, c, r[7]), file=sys.stderr)
                            return 0, 16
                        return r[5], r[6]

                    best, found, how = (-1, 16), None, ""
                    if kind in PROBE_KIND:
                        fitted = fits.get(rep.get(shape))
                        if shape not in rep:
                            why = "no pair probes recorded"
                        elif not fitted:
                            why = "pair fit not run"
                        elif not fitted[1]:
                            why = "pair fit %s: no tree of the family gives every answer" % fitted[0]
                        for c in dict.fromkeys(compact(t) for t in (fitted[1] if fitted else [])):
                            e, t = ok(c)
                            best = max(best, (e, t))
                            if e == t:
                                found, how = c, "the pair fit's trees (%d, %s): the first that gives the random outputs" % (
                                    len(fitted[1]), fitted[0])
                                break
                        if not found and fitted and fitted[1]:
                            why = "%d trees fit the pair answers (%s), none gives the random outputs (best %d/%d)" % (
                                len(fitted[1]), fitted[0], best[0], best[1])
                        if not found and shape in rep:  # the search: the random outputs, then every pair answer
                            tried = 0
                            for c in search_space(dt, kind, int(K)):
                                e, t = ok(c)
                                best = max(best, (e, t))
                                if e != t:
                                    continue
                                pe, pt = cublas_pairs_check.check(args.rec, dt, shape, c, args.fpemu)
                                tried += 1
                                if pe == pt:
                                    found, how = c, "searched (%s): gives the random outputs and all %d pair answers" % (why, pt)
                                    break
                                if tried >= 4:
                                    break
                            if not found:
                                why += "; the search found no tree that gives the random outputs%s (best %d/%d)" % (
                                    " and the pair answers" if tried else "", best[0], best[1])
                        probe_tree = found
                    else:
                        cands = []
                        if probe_tree:
                            t = probe_tree
                            if dt in ("f16", "bf16"):
                                # split-K: the partials summed in f32, in dt, or stored in dt and summed in f32
                                cands = [compact(t, out=dt)] + ([compact(t, out=dt, reduce_fmt=dt), compact(t, out=dt, partial_fmt=dt)]
                                                                if "split=" in t else [])
                            elif kind == "bf16out":
                                cands = [compact(t, out="bf16")]
                            elif kind == "fast1":  # no pair probes of its own: the fast0 tree without promotion, then the search
                                cands = [compact(t, chunk="0"), compact(t)] + list(search_space(dt, kind, int(K)))
                        elif kind == "fast1" or kind == "bf16out":
                            cands = list(search_space(dt, kind, int(K)))
                        for c in dict.fromkeys(cands):
                            e, t = ok(c)
                            best = max(best, (e, t))
                            if e == t:
                                diff = [x for x in c.split() if x not in (probe_tree or "").split()]
                                gone = [x for x in (probe_tree or "").split() if x not in c.split()]
                                if probe_tree and n_variants(kind, probe_tree) > list(dict.fromkeys(cands)).index(c):
                                    how = "the %s tree%s%s" % (PROBE_KIND_OF[dt], " with " + " ".join(diff) if diff else "",
                                                               " without " + " ".join(gone) if gone else "")
                                else:
                                    how = "searched: gives the random outputs (no pair probes of this output)"
                                found = c
                                break
                    if kind == "red0":
                        left.append("%s red0 %s: %s (reduced-precision reduction off: no row of its own)" % (
                            dt, shape, "%s gives %d/%d" % (found, best[0], best[1]) if found else "no tree gives all (best %d/%d)" % best))
                    elif found:
                        rows.append("%s %s status=gemm %s  # %s" % (sel, base, found, how))
                    else:
                        left.append("%s %s %s: %s" % (dt, kind, shape, why if kind in PROBE_KIND else
                                                      ("no variant of the %s tree gives the outputs (best %d/%d)" % (PROBE_KIND_OF[dt], best[0], best[1]) if probe_tree
                                                       else "no %s row to derive it from" % PROBE_KIND_OF[dt])))
    tag = args.dtypes.replace(",", "-") + ("-shapes" if args.shapes else "")
    with open(os.path.join(args.work, "rows-%s.txt" % tag), "w") as f:
        f.write("\n".join(rows) + "\n")
    with open(os.path.join(args.work, "left-%s.txt" % tag), "w") as f:
        f.write("\n".join(left) + "\n")
    print("%d rows (%s), %d outputs left (%s)" % (len(rows), os.path.join(args.work, "rows-%s.txt" % tag), len(left),
                                                   os.path.join(args.work, "left-%s.txt" % tag)))


if __name__ == "__main__":
    main()
