# SPDX-License-Identifier: MIT
# mk/oracle.mk: bin/fpemu against the spec oracle, ref/spec_oracle/ (an exact
# Python reference written independently from the specification text of the
# rounding contract, IEEE 754-2019 and the OCP/P3109 format specifications,
# as docs/semantics.md and docs/formats.md restate it; sharing no code with
# emu/ or ref/; Python 3 standard library only).
#
#   make oracle-smoke  about 30 s on 2 cores: every format family, every op,
#                      conversions, all seven modes, each option set, specials
#                      and a seeded random sample (compare.py --smoke), then
#                      the CLI checks (cli_checks.py, about 1 s). Also runs in
#                      `make test`, as the TAP test tests/t_spec_oracle.sh.
#   make oracle        about 15 min on 2 cores: the full comparison
#                      (compare.py --full, about 43 million vectors), then
#                      the CLI checks.
#
# Both exit non-zero on any disagreement. ORACLE_OUT=DIR keeps summary.txt
# and mismatches.txt there (default: a new temporary directory, printed at
# the end); ORACLE_FLAGS passes more options to compare.py (--seed N,
# --only OP, --jobs N, --ftz-literal).

ORACLE_OUT ?=
ORACLE_FLAGS ?=
ORACLE_RUN = FPEMU_BIN=$(abspath $(BINDIR))/fpemu python3 ref/spec_oracle/compare.py \
  $(if $(ORACLE_OUT),--out $(ORACLE_OUT)) $(ORACLE_FLAGS)

.PHONY: oracle oracle-smoke
oracle-smoke: $(BINDIR)/fpemu
	$(Q)$(ORACLE_RUN) --smoke
	$(Q)FPEMU_BIN=$(abspath $(BINDIR))/fpemu python3 ref/spec_oracle/cli_checks.py --quiet

oracle: $(BINDIR)/fpemu
	$(Q)$(ORACLE_RUN) --full
	$(Q)FPEMU_BIN=$(abspath $(BINDIR))/fpemu python3 ref/spec_oracle/cli_checks.py --quiet
