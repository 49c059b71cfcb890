# SPDX-License-Identifier: MIT
# fpemu: build, test, bench, install.  `make V=1` shows full commands.
#
# Folders and what they build (experiments/, gpu/, ref/ and reports/ have a README;
# emu/SEMANTICS.md holds the arithmetic's decisions):
#   emu/          -> build/libfpemu.a       (the emulator library, libc only)
#   ref/          -> build/libfpemuref.a    (MPFR reference and checker)
#   experiments/  -> build/libfpemutrain.a  (training engine)
#   cli/          -> bin/fpemu              (the program, git-style subcommands)
#   tests/t_*.c   -> build/tests/t_*        (TAP programs run by prove)
#   bench/b_*.c   -> build/bench/b_*        (benchmark programs, `make bench`)
# Extra targets live in mk/*.mk fragments (verify, experiments, gpu, ...).

PREFIX ?= /usr/local
DESTDIR ?=
CC ?= cc
# Bit-reproducibility is part of the result: no contraction into fma, no
# fast-math, no -march=native in anything whose results are compared.
OPT ?= -O2
CFLAGS ?= $(OPT) -g
FPEMU_CFLAGS = -std=gnu11 -Wall -Wextra -Wshadow -Wno-unused-parameter \
  -ffp-contract=off -fno-fast-math -pthread -Iemu -Iref -Iexperiments -Icli -MMD -MP
LDLIBS_ALL = -lmpfr -lgmp -lm -pthread
BUILD ?= build
# Helpers working side by side may use their own BUILD and BINDIR.
BINDIR ?= bin

ifeq ($(V),1)
Q =
else
Q = @
endif

EMU_SRC   := $(wildcard emu/*.c)
REF_SRC   := $(wildcard ref/*.c)
TRAIN_SRC := $(wildcard experiments/*.c)
CLI_SRC   := $(wildcard cli/*.c)
TEST_SRC  := $(wildcard tests/t_*.c)
TESTLIB_SRC := $(filter-out $(TEST_SRC),$(wildcard tests/*.c))
BENCH_SRC := $(wildcard bench/b_*.c)

obj = $(patsubst %.c,$(BUILD)/%.o,$(1))
LIBFPEMU   := $(BUILD)/libfpemu.a
LIBREF     := $(BUILD)/libfpemuref.a
LIBTRAIN   := $(BUILD)/libfpemutrain.a
TESTLIB    := $(call obj,$(TESTLIB_SRC))
TEST_BINS  := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))
ALL_LIBS   := $(LIBTRAIN) $(LIBREF) $(LIBFPEMU)

.PHONY: all deps test bench install uninstall clean check-deps
# Keep test and bench objects: they are intermediates of the link rules.
.SECONDARY:
all: $(BINDIR)/fpemu

# ---- dependencies ---------------------------------------------------------
# Debian packages the build, tests, reports and benchmarks need.
DEB_PACKAGES ?= build-essential libmpfr-dev libgmp-dev gnuplot-nox libopenblas-dev pkg-config
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "deps: installing$$missing"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null) \
	      || { echo "deps: apt-get install failed for:$$missing" >&2; exit 1; }; \
	  else \
	    echo "deps: missing Debian packages:$$missing" >&2; \
	    echo "deps: run: sudo apt-get install -y$$missing" >&2; exit 1; \
	  fi; \
	fi

# ---- libraries and program ------------------------------------------------
$(BUILD)/%.o: %.c | deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(FPEMU_CFLAGS) $(CFLAGS) $(CPPFLAGS) -c $< -o $@

# The library's objects are position-independent, so libfpemu.a links into
# shared objects (a plugin, a Python extension) as well as programs; without
# semantic interposition the compiler still inlines across its functions.
$(call obj,$(EMU_SRC)): FPEMU_CFLAGS += -fPIC -fno-semantic-interposition

$(LIBFPEMU): $(call obj,$(EMU_SRC))
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^
$(LIBREF): $(call obj,$(REF_SRC))
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^
$(LIBTRAIN): $(call obj,$(TRAIN_SRC))
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(BINDIR)/fpemu: $(call obj,$(CLI_SRC)) $(ALL_LIBS)
	@mkdir -p $(BINDIR)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(call obj,$(CLI_SRC)) $(ALL_LIBS) $(LDLIBS_ALL)

# ---- tests ------------------------------------------------------------------
$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TESTLIB) $(ALL_LIBS)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(TESTLIB) $(ALL_LIBS) $(LDLIBS_ALL)

# Test programs find bin/fpemu and ../shared through these.
export FPEMU_BIN = $(abspath $(BINDIR))/fpemu
export FPEMU_BUILD = $(abspath $(BUILD))
export FPEMU_ROOT = $(CURDIR)
PROVE ?= prove
test: $(BINDIR)/fpemu $(TEST_BINS)
	$(PROVE) $(PROVE_FLAGS) $(TEST_BINS) $(wildcard tests/*.sh)

# ---- benchmarks -----------------------------------------------------------
$(BUILD)/bench/%: $(BUILD)/bench/%.o $(ALL_LIBS)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(ALL_LIBS) $(BENCH_LDLIBS) $(LDLIBS_ALL)
BENCH_LDLIBS ?= -lopenblas
bench: $(BENCH_BINS)
	@for b in $(BENCH_BINS); do echo "== $$b"; $$b || exit 1; done

# ---- install ----------------------------------------------------------------
# fpemu.h is the core API; the tensor-core, GEMM and scaling APIs (also in
# libfpemu.a) go to include/fpemu/ (#include <fpemu/gemm.h>).
INSTALL_HEADERS := emu/mma.h emu/gemm.h emu/scaling.h
install: $(BINDIR)/fpemu $(LIBFPEMU)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include/fpemu
	install -m 755 $(BINDIR)/fpemu $(DESTDIR)$(PREFIX)/bin/fpemu
	install -m 644 $(LIBFPEMU) $(DESTDIR)$(PREFIX)/lib/libfpemu.a
	install -m 644 emu/fpemu.h $(DESTDIR)$(PREFIX)/include/fpemu.h
	install -m 644 $(INSTALL_HEADERS) $(DESTDIR)$(PREFIX)/include/fpemu/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(shell sed -n 's/^#define FPEMU_VERSION "\(.*\)"/\1/p' emu/fpemu.h)|' \
	  emu/fpemu.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/fpemu.pc
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/fpemu $(DESTDIR)$(PREFIX)/lib/libfpemu.a \
	  $(DESTDIR)$(PREFIX)/include/fpemu.h $(DESTDIR)$(PREFIX)/lib/pkgconfig/fpemu.pc \
	  $(addprefix $(DESTDIR)$(PREFIX)/include/fpemu/,$(notdir $(INSTALL_HEADERS)))
	-rmdir $(DESTDIR)$(PREFIX)/include/fpemu 2>/dev/null

clean:
	rm -rf $(BUILD) $(BINDIR)

-include $(wildcard mk/*.mk)
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
