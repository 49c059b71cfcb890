# SPDX-License-Identifier: MIT
# mk/verify.mk: the emulator checked against the MPFR reference (owner: ref).
#
#   make verify        minutes: every <= 8-bit format exhaustively (every op,
#                      mode, sat/nosat, both tininess settings, ftz/daz), fma
#                      and the 16/32/64-bit formats sampled (structured grid +
#                      random). Also runs in `make test`, as the TAP test
#                      tests/t_check_verify.sh.
#   make verify-full   hours: the 2^32 runs (f32 -> f16/bf16/e4m3/e5m2, f16
#                      add and bf16 mul over all pairs, in rne; f32 ->
#                      bf16/e4m3 in sr; every fma triple of e4m3/e5m2 in
#                      every mode; MMA dot products of k = 2^31 + 3 and
#                      2^32 + 1, tests/t_mma_bigk.c). Shardable:
#                      `make verify-full SHARD=3/16` runs part 3 (0-based) of
#                      16 of every run; PARTS="f16_add bf16_mul" picks runs;
#                      VERIFY_THREADS=N (default: every CPU).
#
# Both use $(BUILD)/verify/fpemu: the same program as bin/fpemu, but linked
# with the static MPFR/GMP when they are installed. MPFR keeps its exponent
# range and flags in thread-local storage; in a static link those accesses
# are plain %fs loads instead of __tls_get_addr calls, which makes the
# reference 1.2-1.3x faster (docs/benchmarks.md). Without libmpfr.a it links -lmpfr.

VERIFY_BIN := $(BUILD)/verify/fpemu
VERIFY_STATIC := $(shell a=$$($(CC) -print-file-name=libmpfr.a 2>/dev/null); \
  b=$$($(CC) -print-file-name=libgmp.a 2>/dev/null); [ -f "$$a" ] && [ -f "$$b" ] && echo "$$a $$b")
VERIFY_LDLIBS := $(if $(VERIFY_STATIC),$(VERIFY_STATIC) $(filter-out -lmpfr -lgmp,$(LDLIBS_ALL)),$(LDLIBS_ALL))

$(VERIFY_BIN): $(call obj,$(CLI_SRC)) $(ALL_LIBS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(call obj,$(CLI_SRC)) $(ALL_LIBS) $(VERIFY_LDLIBS)

# tests/t_check_verify.sh (run by prove in `make test`) uses this binary.
export FPEMU_CHECK_BIN = $(abspath $(VERIFY_BIN))
test: $(VERIFY_BIN)

SHARD ?= 0/1
PARTS ?=
VERIFY_THREADS ?= 0

.PHONY: verify verify-full
verify: $(VERIFY_BIN)
	$(Q)sh tests/t_check_verify.sh

verify-full: $(VERIFY_BIN) $(BUILD)/tests/t_mma_bigk
	$(Q)FPEMU_BIGK_BIN=$(abspath $(BUILD)/tests/t_mma_bigk) sh ref/verify_full.sh "$(FPEMU_CHECK_BIN)" "$(SHARD)" "$(VERIFY_THREADS)" $(PARTS)

# make xcheck: bin/fpemu against references outside this repository:
# ml_dtypes and NumPy in rne (ref/xcheck.py), and Graphcore's gfloat in
# every mode, sat and sr, P3109 formats included (ref/xcheck_gfloat.py);
# docs/verification.md. The packages (ref/requirements.txt, pinned) come
# from PyPI into $(VENV) through deps-py; tests/t_xcheck.sh runs the quick
# forms in `make test`, this target the full ones (minutes).
.PHONY: xcheck
xcheck: $(BINDIR)/fpemu deps-py
	$(Q)FPEMU_BIN=$(abspath $(BINDIR))/fpemu $(FPEMU_PYTHON) ref/xcheck.py
	$(Q)FPEMU_BIN=$(abspath $(BINDIR))/fpemu $(FPEMU_PYTHON) ref/xcheck_gfloat.py
