# SPDX-License-Identifier: MIT
# mk/suite.mk: the training experiments of `make experiments` (section
# "training"), `make experiments-full`, and the numeric drift gate
# (`make drift`, `make baseline`). reports/README.md has the details.
#
# The experiments are text files in $(SUITE_DIR) (experiments/suite/*.txt,
# format in experiments/suite/README.md). `fpemu report --plan` turns them
# into a makefile with one target per distinct run (runs shared by several
# experiments run once), which a sub-make runs in parallel (-j$(SUITE_JOBS)
# unless you gave -j yourself) in $(SUITE_CACHE) (-C: the plan's targets are
# relative to it, so no path is written into make or shell text) into
# $(SUITE_CACHE)/KEY/. A run is redone
# only when the training engine, the emulator or the data change (or its
# definition: the key hashes the whole command). `fpemu report` then copies
# the runs into $(REPORT_DIR)/training/EXPERIMENT/RUN/ and writes the plots,
# verdicts and tables.
#
# Drift gate: `make drift` runs `make experiments` and compares the files
# under $(DRIFT_BASELINE) with the same paths under $(REPORT_DIR), with the
# bands in $(DRIFT_TOLERANCES); `make baseline` copies $(DRIFT_FILES) from
# the last report into $(DRIFT_BASELINE). A section that wants its data
# under the gate adds its files here from its own fragment:
#     DRIFT_FILES += mysection/*.csv

SUITE_DIR ?= experiments/suite
SUITE_FULL_DIR ?= experiments/suite/full
SUITE_CACHE ?= $(BUILD)/suite-runs
SUITE_JOBS ?= 2
DRIFT_BASELINE ?= experiments/baseline
DRIFT_TOLERANCES ?= experiments/drift-tolerances.txt
DRIFT_FILES += catalogue/formats.csv errk/*.csv training/summary.csv training/summary-seeds.csv \
  training/*/*/seed-*/metrics.csv training/*/*/seed-*/eval.csv training/*/*/seed-*/tensors.csv \
  training/*/*/metrics.csv training/*/*/eval.csv training/*/*/tensors.csv

# What a training run's results depend on (not the report or drift code).
SUITE_DEP = $(abspath $(LIBTRAIN) $(LIBFPEMU) $(BUILD)/cli/cmd_train.o) $(CURDIR)/experiments/data/digits.csv.gz
# -j for the runs unless the caller gave one (then its jobserver is shared).
# SEEDS="1 2 3 4 5": run every experiment on these seeds instead of its
# definition's (`seeds:` lines; the default suite has 3).
SEEDS ?=
suite_seeds = $(if $(strip $(SEEDS)),--seeds "$(strip $(SEEDS))")
suite_jobs = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(SUITE_JOBS))

EXPERIMENT_SECTIONS += training
EXPERIMENT_RANK_training := 30
.PHONY: experiments-training experiments-full suite-plan drift baseline
experiments-training: $(BINDIR)/fpemu
	@$(if $(Q),echo "  SUITE   $(SUITE_DIR) -> $(REPORT_DIR)/training (runs in $(SUITE_CACHE))")
	$(Q)mkdir -p $(SUITE_CACHE)
	$(Q)$(BINDIR)/fpemu report --plan --suite $(SUITE_DIR) --runs $(abspath $(SUITE_CACHE)) $(suite_seeds) >$(SUITE_CACHE)/plan.mk.tmp \
	  && mv $(SUITE_CACHE)/plan.mk.tmp $(SUITE_CACHE)/plan.mk
	$(Q)$(MAKE) --no-print-directory $(suite_jobs) -C $(SUITE_CACHE) -f plan.mk \
	  SUITE_FPEMU=$(abspath $(BINDIR))/fpemu SUITE_DEP="$(SUITE_DEP)" suite-runs
	$(Q)rm -rf $(REPORT_DIR)/training.tmp
	$(Q)$(BINDIR)/fpemu report --suite $(SUITE_DIR) --runs $(SUITE_CACHE) $(suite_seeds) --out $(REPORT_DIR)/training.tmp
	$(Q)$(call experiments_publish,training)

# The plan alone (which runs, in which order, with which commands).
suite-plan: $(BINDIR)/fpemu
	$(Q)$(BINDIR)/fpemu report --plan --suite $(SUITE_DIR) --runs $(abspath $(SUITE_CACHE)) $(suite_seeds)

# The longer suite: more steps, the tiny transformer, more settings; its own
# cache and report folder (reports/full/latest, and a dated copy).
experiments-full:
	$(Q)$(MAKE) --no-print-directory experiments SUITE_DIR=$(SUITE_FULL_DIR) SUITE_CACHE=$(BUILD)/suite-runs-full \
	  REPORT_ROOT=$(REPORT_ROOT)/full REPORT_DIR=$(REPORT_ROOT)/full/latest

drift: experiments
	$(Q)$(MAKE) --no-print-directory drift-check

# The gate alone, on the report already in $(REPORT_DIR) (for a CI job that
# ran `make experiments` in an earlier step).
.PHONY: drift-check
drift-check: $(BINDIR)/fpemu
	$(BINDIR)/fpemu drift --tolerances $(DRIFT_TOLERANCES) $(DRIFT_BASELINE) $(REPORT_DIR)

# Refresh the committed baseline from the last report (run `make experiments`
# first, or `make baseline-from-scratch`); then commit experiments/baseline
# with a message that says why the numbers moved.
baseline:
	@[ -f $(REPORT_DIR)/index.html ] || { echo "baseline: no report in $(REPORT_DIR): run make experiments first" >&2; exit 2; }
	$(Q)rm -rf $(DRIFT_BASELINE).tmp && mkdir -p $(DRIFT_BASELINE).tmp
	$(Q)cd $(REPORT_DIR) && for f in $(DRIFT_FILES); do \
	  [ -f "$$f" ] || continue; mkdir -p "$(CURDIR)/$(DRIFT_BASELINE).tmp/$$(dirname "$$f")" && cp "$$f" "$(CURDIR)/$(DRIFT_BASELINE).tmp/$$f"; done
	$(Q)n=$$(find $(DRIFT_BASELINE).tmp -type f | wc -l); [ "$$n" -gt 0 ] || { echo "baseline: none of DRIFT_FILES in $(REPORT_DIR)" >&2; exit 2; }; \
	  rm -rf $(DRIFT_BASELINE) && mv $(DRIFT_BASELINE).tmp $(DRIFT_BASELINE) && \
	  echo "baseline: $$n files from $(REPORT_DIR) in $(DRIFT_BASELINE); review with git diff --stat, then commit with a message saying why"

.PHONY: baseline-from-scratch
baseline-from-scratch: experiments
	$(Q)$(MAKE) --no-print-directory baseline
