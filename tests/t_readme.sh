#!/bin/sh
# SPDX-License-Identifier: MIT
# t_readme.sh: the README's tour stays true. Every ```console block of
# README.md is run, in order, in one scratch folder (with examples/ and
# tests/ of the repository linked into it, bin/ on PATH, and pkg-config and
# the loader pointed at the build tree's libfpemu): each `$ COMMAND` line
# runs under sh, and its output (stdout and stderr) must be the lines that
# follow it, up to the next `$ ` line or the end of the block. A line `...`
# stands for any number of lines. One TAP test per command.
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${FPEMU_ROOT:-$(dirname "$HERE")}
BIN=${FPEMU_BIN:-$ROOT/bin/fpemu}
BUILD=${FPEMU_BUILD:-$ROOT/build}
if [ ! -x "$BIN" ]; then echo "1..1"; echo "not ok 1 - $BIN is not built"; exit 1; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_readme.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
ln -s "$ROOT/examples" "$tmp/examples"
ln -s "$ROOT/tests" "$tmp/tests"
# under make test-asan the build tree's libfpemu carries ASan and UBSan: the
# README's `cc` must link them too (a wrapper first on PATH)
mkdir "$tmp/.bin"
if [ -n "${FPEMU_HARDEN_ASAN:-}" ]; then
    printf '#!/bin/sh\nexec %s -fsanitize=address,undefined "$@"\n' "$(command -v cc)" >"$tmp/.bin/cc"
    chmod +x "$tmp/.bin/cc"
fi
PATH="$tmp/.bin:$(dirname "$BIN"):$PATH" PKG_CONFIG_PATH="$BUILD/pkgconfig" LD_LIBRARY_PATH="$BUILD" FPEMU_ROOT="$ROOT" \
    exec python3 - "$ROOT/README.md" "$tmp" <<'PY'
import subprocess, sys

readme, work = sys.argv[1], sys.argv[2]
cmds = []  # (line number, command, expected lines)
inside = False
for no, line in enumerate(open(readme, encoding="utf-8").read().split("\n"), 1):
    if not inside:
        inside = line.strip() == "```console"
        continue
    if line.strip() == "```":
        inside = False
        continue
    if line.startswith("$ "):
        cmds.append((no, line[2:], []))
    elif cmds:
        cmds[-1][2].append(line)
if not cmds:
    print("1..1\nnot ok 1 - README.md has no ```console block")
    sys.exit(1)

def matches(want, got):
    """want may hold '...' lines, each standing for any run of lines"""
    if not want:
        return not got
    if want[0] == "...":
        return any(matches(want[1:], got[i:]) for i in range(len(got) + 1))
    return bool(got) and got[0] == want[0] and matches(want[1:], got[1:])

print("1..%d" % len(cmds))
failed = 0
for i, (no, cmd, want) in enumerate(cmds, 1):
    r = subprocess.run(["sh", "-c", cmd], cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    got = r.stdout.decode("utf-8", "replace").split("\n")
    if got and got[-1] == "":
        got.pop()
    if r.returncode == 0 and matches(want, got):
        print("ok %d - README.md line %d: %s" % (i, no, cmd))
    else:
        failed += 1
        print("not ok %d - README.md line %d: %s (exit %d)" % (i, no, cmd, r.returncode))
        for w in want[:20]:
            print("#   want: %s" % w)
        for g in got[:20]:
            print("#   got:  %s" % g)
sys.exit(1 if failed else 0)
PY
