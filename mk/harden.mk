# SPDX-License-Identifier: MIT
# mk/harden.mk: hardening (sanitizers, fuzzing, valgrind, long
# determinism/resume runs). Nothing here runs in plain `make test` except
# the tests/t_badinput*.sh, t_resume*.sh and t_determinism*.sh scripts
# (which are ordinary tests/*.sh).
#
#   make test-asan        the whole test suite built with -fsanitize=address,undefined
#                         (halt on the first UBSan report) in $(ASAN_BUILD)
#   make fuzz             every libFuzzer target for FUZZ_SECONDS each (one at a time)
#   make fuzz-campaign    every target for FUZZ_RUNS executions (default 10^7; one at a time)
#   make fuzz-build       only build the fuzz targets ($(FUZZ_BUILD)/fuzz_*)
#   make fuzz-replay      run every target over its committed corpus and
#                         fuzz/regress/ (the findings) once, no fuzzing
#   make valgrind-check   every subcommand on sample inputs under valgrind memcheck
#   make harden-long      the 20x kill-and-resume and the longer determinism runs
#
# All of it is niced (HARDEN_NICE) and runs one job at a time: the machine
# is shared.

HARDEN_NICE ?= nice -n 19
ASAN_BUILD ?= build/asan
ASAN_FLAGS ?= -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
ASAN_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
FUZZ_CC ?= clang
FUZZ_BUILD ?= $(BUILD)/fuzz
FUZZ_SECONDS ?= 60
FUZZ_FLAGS ?= -O1 -g -fno-omit-frame-pointer
FUZZ_COV = -fsanitize-coverage-ignorelist=fuzz/nocov.txt
# Sources built without comparison tracing (-fsanitize-coverage=trace-cmp):
# empty by default; a throughput campaign can name the arithmetic (emu/,
# ref/), whose traced comparisons were most of fuzz_diff's and fuzz_format's
# time, and keep it on the parsers (see docs/hardening.md).
FUZZ_NOCMP ?=
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_RUNS ?= 10000000
# Per-target libFuzzer options (input size caps: a vector line, a format
# spec, argument lists, CSV/config files and .npy headers need far less
# than the default 4096 bytes, and fuzz_diff compares one case per 32 bytes,
# so its 512 bytes are up to 16 cases; fuzz_state keeps the default, its
# seed states are 57 KB (version 1) and 400 KB (version 2, with --init and
# --order)).
FUZZ_OPTS_fuzz_vector ?= -max_len=1024
FUZZ_OPTS_fuzz_format ?= -max_len=256
FUZZ_OPTS_fuzz_args ?= -max_len=512
FUZZ_OPTS_fuzz_csv ?= -max_len=2048
FUZZ_OPTS_fuzz_config ?= -max_len=2048
FUZZ_OPTS_fuzz_npy ?= -max_len=4096
FUZZ_OPTS_fuzz_npz ?= -max_len=4096
FUZZ_OPTS_fuzz_safetensors ?= -max_len=4096
FUZZ_OPTS_fuzz_diff ?= -max_len=512
FUZZ_OPTS_fuzz_ctx ?= -max_len=1024
FUZZ_OPTS_fuzz_table ?= -max_len=4096
FUZZ_TARGETS := $(patsubst fuzz/%.c,%,$(filter-out fuzz/fuzz_common.h,$(wildcard fuzz/fuzz_*.c)))
FUZZ_BINS := $(addprefix $(FUZZ_BUILD)/,$(FUZZ_TARGETS))
# libraries for the fuzzers: the same sources as the program (cli/ without main.c,
# the library's generated table source included)
FUZZ_LIB_SRC := $(EMU_SRC) $(EMU_GEN_SRC) $(REF_SRC) $(TRAIN_SRC) $(filter-out cli/main.c,$(CLI_SRC))
FUZZ_OBJ = $(patsubst %.c,$(FUZZ_BUILD)/obj/%.o,$(1))
FUZZ_LIB := $(FUZZ_BUILD)/libfuzzfpemu.a
VALGRIND ?= valgrind

.PHONY: test-asan fuzz fuzz-campaign fuzz-build fuzz-replay valgrind-check harden-long

# ---- sanitizers ---------------------------------------------------------------
# The GPU harness (bin/fpemu-gpu, nvcc) is left out (NVCC= empty): nvcc
# objects do not take the sanitizer flags; gpu/host/*.c, which the CPU tests
# link, is built with them like everything else.
test-asan:
	$(HARDEN_NICE) $(MAKE) --no-print-directory NVCC= BUILD=$(ASAN_BUILD) BINDIR=$(ASAN_BUILD)/bin \
	  CFLAGS="$(ASAN_FLAGS)" LDFLAGS="-fsanitize=address,undefined" $(ASAN_BUILD)/bin/fpemu
	$(ASAN_ENV) FPEMU_HARDEN_ASAN=1 $(HARDEN_NICE) $(MAKE) --no-print-directory NVCC= BUILD=$(ASAN_BUILD) \
	  BINDIR=$(ASAN_BUILD)/bin CFLAGS="$(ASAN_FLAGS)" LDFLAGS="-fsanitize=address,undefined" \
	  PROVE_FLAGS="$(PROVE_FLAGS)" test

# ---- fuzzing ----------------------------------------------------------------
$(FUZZ_BUILD)/obj/%.o: %.c fuzz/nocov.txt | deps-deb
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(FPEMU_CFLAGS) -Wno-unused-command-line-argument $(FUZZ_FLAGS) $(FUZZ_SAN) $(FUZZ_COV) \
	  $(if $(filter $<,$(FUZZ_NOCMP)),-fno-sanitize-coverage=trace-cmp) \
	  -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_LIB): $(call FUZZ_OBJ,$(FUZZ_LIB_SRC))
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz_common.h $(FUZZ_LIB)
	@$(if $(Q),echo "  FUZZLD  $@")
	$(Q)$(FUZZ_CC) $(FPEMU_CFLAGS) $(FUZZ_FLAGS) $(FUZZ_SAN) -fsanitize=fuzzer -MF $@.d -o $@ $< $(FUZZ_LIB) $(LDLIBS_ALL)

fuzz-build:
	$(HARDEN_NICE) $(MAKE) --no-print-directory $(FUZZ_BINS)

# Each target: seeds from fuzz/corpus/NAME (committed); new inputs go to
# $(FUZZ_BUILD)/corpus/NAME; past findings (fuzz/regress/NAME) are replayed by
# fuzz-replay, not fed to the campaign (an open one would stop it); a crash
# lands in $(FUZZ_BUILD)/crash/NAME/ and stops `make fuzz`. The last line of
# each log (executions, seconds) is appended to $(FUZZ_BUILD)/runs.txt.
fuzz: fuzz-build
	@set -e; for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$t $(FUZZ_BUILD)/crash/$$t fuzz/corpus/$$t; \
	  echo "== $$t for $(FUZZ_SECONDS) s"; \
	  FUZZ_TMPDIR=$(FUZZ_BUILD) $(HARDEN_NICE) $(FUZZ_BUILD)/$$t -max_total_time=$(FUZZ_SECONDS) -timeout=20 -rss_limit_mb=2048 \
	    -print_final_stats=1 -close_fd_mask=3 -artifact_prefix=$(FUZZ_BUILD)/crash/$$t/ $(FUZZ_OPTS) \
	    $(FUZZ_BUILD)/corpus/$$t fuzz/corpus/$$t >$(FUZZ_BUILD)/$$t.log 2>&1 \
	    || { echo "fuzz: $$t FAILED, see $(FUZZ_BUILD)/$$t.log and $(FUZZ_BUILD)/crash/$$t/"; tail -30 $(FUZZ_BUILD)/$$t.log; exit 1; }; \
	  ex=$$(sed -n 's/^stat::number_of_executed_units: *//p' $(FUZZ_BUILD)/$$t.log); \
	  echo "$$(date -u +%FT%TZ) $$t $(FUZZ_SECONDS)s $$ex executions" | tee -a $(FUZZ_BUILD)/runs.txt; \
	done

# The 10^7-execution campaign of the issue: each target for FUZZ_RUNS
# executions (-runs=), scratch files in FUZZ_TMPDIR (/dev/shm: no disk
# I/O per input), rss limit 6 GB (fuzz_diff's result tables, fuzz_format's
# interned formats). Appends "target executions wall user" to runs.txt. For
# throughput (docs/hardening.md), build it without ASan and without
# comparison tracing in the arithmetic:
#   make fuzz-campaign FUZZ_BUILD=build/fuzz-fast FUZZ_FLAGS='-O2 -g' \
#     FUZZ_SAN='-fsanitize=undefined -fno-sanitize-recover=undefined' \
#     FUZZ_NOCMP="$(FUZZ_ARITH_SRC)"
FUZZ_ARITH_SRC = $(filter-out emu/format.c emu/mma_probe.c,$(wildcard emu/*.c)) $(wildcard ref/*.c)
FUZZ_TMPDIR ?= /dev/shm
define fuzz_campaign_one
	@mkdir -p $(FUZZ_BUILD)/corpus/$(1) $(FUZZ_BUILD)/crash/$(1) fuzz/corpus/$(1)
	@echo "== $(1) for $(FUZZ_RUNS) executions"; s=$$(date +%s); \
	  FUZZ_TMPDIR=$(FUZZ_TMPDIR) $(HARDEN_NICE) $(FUZZ_BUILD)/$(1) -runs=$(FUZZ_RUNS) -timeout=20 -rss_limit_mb=6000 \
	    -print_final_stats=1 -close_fd_mask=3 -artifact_prefix=$(FUZZ_BUILD)/crash/$(1)/ $(FUZZ_OPTS_$(1)) $(FUZZ_OPTS) \
	    $(FUZZ_BUILD)/corpus/$(1) fuzz/corpus/$(1) >$(FUZZ_BUILD)/$(1).log 2>&1 \
	    || { echo "fuzz: $(1) FAILED, see $(FUZZ_BUILD)/$(1).log and $(FUZZ_BUILD)/crash/$(1)/"; tail -30 $(FUZZ_BUILD)/$(1).log; exit 1; }; \
	  ex=$$(sed -n 's/^stat::number_of_executed_units: *//p' $(FUZZ_BUILD)/$(1).log); \
	  echo "$$(date -u +%FT%TZ) $(1) $$ex executions $$(( $$(date +%s) - s ))s wall $(FUZZ_OPTS_$(1))" | tee -a $(FUZZ_BUILD)/runs.txt

endef
fuzz-campaign: fuzz-build
	$(foreach t,$(FUZZ_TARGETS),$(call fuzz_campaign_one,$(t)))

# fuzz_diff inputs encode formats as indices into its list: a raw finding
# replays the same case only with the list it was found with; the durable
# replay is fuzz/regress/vectors.txt (tests/t_badinput_fuzz.sh).
fuzz-replay: fuzz-build
	@set -e; for t in $(FUZZ_TARGETS); do \
	  files=$$(find fuzz/corpus/$$t fuzz/regress/$$t -type f 2>/dev/null || true); \
	  [ -n "$$files" ] || continue; \
	  echo "== $$t: $$(echo $$files | wc -w) inputs"; \
	  FUZZ_TMPDIR=$(FUZZ_BUILD) $(FUZZ_BUILD)/$$t $$files >$(FUZZ_BUILD)/$$t.replay.log 2>&1 \
	    || { tail -30 $(FUZZ_BUILD)/$$t.replay.log; exit 1; }; \
	done

# ---- valgrind -----------------------------------------------------------------
valgrind-check: $(BINDIR)/fpemu
	FPEMU_BIN=$(abspath $(BINDIR))/fpemu VALGRIND="$(VALGRIND)" $(HARDEN_NICE) sh fuzz/valgrind.sh

# ---- long runs ----------------------------------------------------------------
harden-long: $(BINDIR)/fpemu
	FPEMU_RESUME_ROUNDS=20 $(HARDEN_NICE) bash tests/t_resume.sh
	FPEMU_DET_LONG=1 $(HARDEN_NICE) bash tests/t_determinism.sh
