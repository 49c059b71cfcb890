#!/bin/sh
# SPDX-License-Identifier: MIT
# instr.sh FORMAT MODE OP: instructions per scalar call, counted by callgrind
# (deterministic, unlike timings on a shared machine): the difference
# between 60 and 20 passes of bench/one_op over 4096 operands, so setup
# cost cancels. Needs valgrind and `make $(BUILD)/bench/one_op`.
set -e
bin=${ONE_OP:-build/bench/one_op}
[ -x "$bin" ] || { echo "instr.sh: $bin missing (make build/bench/one_op)" >&2; exit 2; }
ir() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" "$3" "$4" 2>&1 |
        sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}
a=$(ir "$1" "$2" "$3" 60)
b=$(ir "$1" "$2" "$3" 20)
[ -n "$a" ] && [ -n "$b" ] || { echo "instr.sh: callgrind gave no count" >&2; exit 2; }
echo "$1 $2 $3: $(( (a - b) / (40 * 4096) )) instructions per call (loop included)"
