# SPDX-License-Identifier: MIT
# fpemu: build, test, bench, install.  `make V=1` shows full commands.
#
# Folders and what they build (experiments/, gpu/, ref/ and reports/ have a README;
# docs/semantics.md holds the arithmetic's decisions, docs/install.md the targets):
#   emu/          -> build/libfpemu.a, build/libfpemu.so.VERSION
#                                           (the emulator library, libc only;
#                                           emu/cublas-h200.txt built in)
#   ref/          -> build/libfpemuref.a    (MPFR reference and checker)
#   experiments/  -> build/libfpemutrain.a  (training engine)
#   cli/          -> bin/fpemu              (the program, git-style subcommands)
#   tests/t_*.c   -> build/tests/t_*        (TAP programs run by prove)
#   bench/b_*.c   -> build/bench/b_*        (benchmark programs, `make bench`)
# Extra targets live in mk/*.mk fragments (verify, experiments, gpu, ...).

PREFIX ?= /usr/local
DESTDIR ?=
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share/fpemu
DOCDIR ?= $(PREFIX)/share/doc/fpemu
# The one version source is FPEMU_VERSION in emu/fpemu.h; the program, the
# shared library's name and soname, fpemu.pc and CHANGELOG.md's newest
# entry (checked by tests/t_install.sh) follow it.
VERSION := $(shell sed -n 's/^\#define FPEMU_VERSION "\(.*\)"/\1/p' emu/fpemu.h)
SOVERSION := $(firstword $(subst ., ,$(VERSION)))
CC ?= cc
# Bit-reproducibility is part of the result: no contraction into fma, no
# fast-math, no -march=native in anything whose results are compared.
OPT ?= -O2
CFLAGS ?= $(OPT) -g
# The dependency files name each object both as seen from here and by its
# absolute path: a build folder used once as BUILD=$PWD/build and once as
# BUILD=build still sees a header change (with one spelling only, the other's
# objects were never rebuilt).
FPEMU_CFLAGS = -std=gnu11 -Wall -Wextra -Wshadow -Wno-unused-parameter \
  -ffp-contract=off -fno-fast-math -pthread -Iemu -Iref -Iexperiments -Icli -MMD -MP \
  -MT '$(patsubst $(CURDIR)/%,%,$(abspath $@))' -MT '$(abspath $@)'
# zlib reads gzip data (experiments/), cJSON the run folders' summary.json (cli/)
LDLIBS_ALL = -lmpfr -lgmp -lcjson -lz -lm -pthread
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
# generated library sources (below: the built-in cuBLAS tree table)
EMU_GEN_SRC := $(BUILD)/gen/cublas_table.c
EMU_OBJ    := $(call obj,$(EMU_SRC)) $(EMU_GEN_SRC:.c=.o)
LIBFPEMU   := $(BUILD)/libfpemu.a
LIBFPEMU_SO := $(BUILD)/libfpemu.so.$(VERSION)
LIBREF     := $(BUILD)/libfpemuref.a
LIBTRAIN   := $(BUILD)/libfpemutrain.a
TESTLIB    := $(call obj,$(TESTLIB_SRC))
TEST_BINS  := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))
ALL_LIBS   := $(LIBTRAIN) $(LIBREF) $(LIBFPEMU)

.PHONY: all deps deps-deb deps-py test bench install uninstall clean check-deps
# Keep test and bench objects: they are intermediates of the link rules.
.SECONDARY:
all: $(BINDIR)/fpemu $(LIBFPEMU_SO)

# ---- dependencies ---------------------------------------------------------
# `make deps`: the Debian packages the build, tests, reports and benchmarks
# need (deps-deb), then the Python packages of the cross-checks in a virtual
# environment under $(BUILD) (deps-py). Compiling needs only deps-deb.
DEB_PACKAGES ?= build-essential libmpfr-dev libgmp-dev zlib1g-dev libcjson-dev gnuplot-nox libopenblas-dev \
  pkg-config python3 python3-venv xz-utils parallel
deps: deps-deb deps-py
deps-deb:
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

# The cross-checks' packages (ref/requirements.txt, pinned) from PyPI into
# $(VENV); built in $(VENV).tmp and renamed, so a failed install leaves no
# half-made environment. Tests run its interpreter, $(FPEMU_PYTHON).
VENV := $(BUILD)/venv
export FPEMU_PYTHON = $(abspath $(VENV))/bin/python
deps-py: $(VENV)/.requirements
$(VENV)/.requirements: ref/requirements.txt | deps-deb
	@echo "deps: Python packages of ref/requirements.txt into $(VENV)"
	$(Q)rm -rf $(VENV).tmp $(VENV) && python3 -m venv $(VENV).tmp \
	  && $(VENV).tmp/bin/python -m pip install -q --disable-pip-version-check --no-input -r ref/requirements.txt \
	  && cp ref/requirements.txt $(VENV).tmp/.requirements && mv $(VENV).tmp $(VENV) \
	  || { rm -rf $(VENV).tmp; echo "deps: could not install ref/requirements.txt from PyPI into $(VENV)" >&2; exit 1; }

# ---- libraries and program ------------------------------------------------
$(BUILD)/%.o: %.c | deps-deb
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(FPEMU_CFLAGS) $(CFLAGS) $(CPPFLAGS) -c $< -o $@

# The library's objects are position-independent, so libfpemu.a links into
# shared objects (a plugin, a Python extension) as well as programs; without
# semantic interposition the compiler still inlines across its functions.
$(EMU_OBJ): FPEMU_CFLAGS += -fPIC -fno-semantic-interposition

# The default tree table of `--algo cublas` (emu/cublas-h200.txt, its one
# source) is compiled into the library as a C string, so that libfpemu.so
# and the Python wheel carry it (fpemu_sumtree_table_builtin, emu/sumtree.h).
$(EMU_GEN_SRC): emu/cublas-h200.txt
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  GEN     $@")
	$(Q){ echo '/* generated by the Makefile from emu/cublas-h200.txt: edit that file */'; \
	  echo 'extern const char emu__cublas_table_text[];'; echo 'const char emu__cublas_table_text[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; echo ';'; } >$@.tmp && mv $@.tmp $@
$(BUILD)/gen/%.o: $(BUILD)/gen/%.c
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(FPEMU_CFLAGS) $(CFLAGS) $(CPPFLAGS) -c $< -o $@

$(LIBFPEMU): $(EMU_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

# The shared library: libfpemu.so.VERSION, soname libfpemu.so.SOVERSION (the
# major version), exporting only the public fpemu_* names (emu/libfpemu.map).
$(LIBFPEMU_SO): $(EMU_OBJ) emu/libfpemu.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,-soname,libfpemu.so.$(SOVERSION) -Wl,--version-script=emu/libfpemu.map \
	  -Wl,--no-undefined -o $@ $(EMU_OBJ) -lm -pthread
	$(Q)ln -sf $(notdir $@) $(BUILD)/libfpemu.so.$(SOVERSION) && ln -sf libfpemu.so.$(SOVERSION) $(BUILD)/libfpemu.so
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

# t_train_oom makes the engine's allocations fail one at a time: its
# malloc, calloc, realloc and free wrap the libraries' (ld --wrap).
$(BUILD)/tests/t_train_oom: $(BUILD)/tests/t_train_oom.o $(TESTLIB) $(ALL_LIBS)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free -o $@ $< $(TESTLIB) \
	  $(ALL_LIBS) $(LDLIBS_ALL)

# t_ex2_approx reads its recording (an .npz) with the program's own readers.
$(BUILD)/tests/t_ex2_approx: $(BUILD)/tests/t_ex2_approx.o $(call obj,cli/npz.c cli/npy.c cli/util.c) $(TESTLIB) $(ALL_LIBS)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(call obj,cli/npz.c cli/npy.c cli/util.c) $(TESTLIB) $(ALL_LIBS) $(LDLIBS_ALL)

# Test programs find bin/fpemu and the repository through these.
export FPEMU_BIN = $(abspath $(BINDIR))/fpemu
export FPEMU_BUILD = $(abspath $(BUILD))
export FPEMU_ROOT = $(CURDIR)
PROVE ?= prove
# The test files run in parallel, one prove job per core: each works in its
# own temporary folder and shares only the build with the others.
# PROVE_FLAGS=-v runs them one at a time and shows every line.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
PROVE_FLAGS ?= -j$(TEST_JOBS)
# tests/lib/prove.sh runs prove, then lists every test file that skipped and why.
test: deps $(BINDIR)/fpemu $(LIBFPEMU_SO) $(TEST_BINS)
	$(Q)PROVE="$(PROVE)" sh tests/lib/prove.sh $(PROVE_FLAGS) $(TEST_BINS) $(wildcard tests/t_*.sh)

# ---- benchmarks -----------------------------------------------------------
# every program links bench/bench.c, the shared interleaved timing (bench/bench.h)
$(BUILD)/bench/%: $(BUILD)/bench/%.o $(BUILD)/bench/bench.o $(ALL_LIBS)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/bench/bench.o $(ALL_LIBS) $(BENCH_LDLIBS) $(LDLIBS_ALL)
BENCH_LDLIBS ?= -lopenblas
bench: $(BENCH_BINS)
	@for b in $(BENCH_BINS); do echo "== $$b"; $$b || exit 1; done

# ---- install ----------------------------------------------------------------
# $(call fpemu_pc,PREFIX,LIBDIR,INCLUDEDIR): fpemu.pc on standard output.
fpemu_pc = sed -e 's|@PREFIX@|$(1)|' -e 's|@LIBDIR@|$(2)|' -e 's|@INCLUDEDIR@|$(3)|' -e 's|@VERSION@|$(VERSION)|' emu/fpemu.pc.in

# The same for the build tree (headers in emu/, libraries in $(BUILD)):
# PKG_CONFIG_PATH=$(BUILD)/pkgconfig builds a program against an uninstalled
# libfpemu, as tests/t_readme.sh does with the README's example.
$(BUILD)/pkgconfig/fpemu.pc: emu/fpemu.pc.in emu/fpemu.h
	@mkdir -p $(dir $@)
	$(Q)$(call fpemu_pc,$(CURDIR),$(abspath $(BUILD)),$(CURDIR)/emu) > $@.tmp && mv $@.tmp $@
test: $(BUILD)/pkgconfig/fpemu.pc

# fpemu.h is the core API; the tensor-core, GEMM and scaling APIs and the
# binding interface (also in libfpemu) go to include/fpemu/ (#include
# <fpemu/gemm.h>, <fpemu/fpemu_api.h>). The digits data
# and the report's gnuplot scripts go to DATADIR, where an installed `fpemu
# train` and `fpemu report` find them.
INSTALL_HEADERS := emu/mma.h emu/gemm.h emu/scaling.h emu/fpemu_api.h
INSTALL_GP := $(wildcard reports/*.gp)
INSTALLED = $(PREFIX)/bin/fpemu $(LIBDIR)/libfpemu.a $(LIBDIR)/libfpemu.so.$(VERSION) \
  $(LIBDIR)/libfpemu.so.$(SOVERSION) $(LIBDIR)/libfpemu.so $(LIBDIR)/pkgconfig/fpemu.pc \
  $(INCLUDEDIR)/fpemu.h $(addprefix $(INCLUDEDIR)/fpemu/,$(notdir $(INSTALL_HEADERS))) \
  $(MANDIR)/man1/fpemu.1 $(DATADIR)/digits.csv.gz $(addprefix $(DATADIR)/,$(INSTALL_GP)) $(DOCDIR)/LICENSE $(DOCDIR)/README.md \
  $(DOCDIR)/digits-README.md $(DOCDIR)/CHANGELOG.md
install: $(BINDIR)/fpemu $(LIBFPEMU) $(LIBFPEMU_SO)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/fpemu \
	  $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(DATADIR)/reports $(DESTDIR)$(DOCDIR)
	install -m 755 $(BINDIR)/fpemu $(DESTDIR)$(PREFIX)/bin/fpemu
	install -m 644 $(LIBFPEMU) $(DESTDIR)$(LIBDIR)/libfpemu.a
	install -m 755 $(LIBFPEMU_SO) $(DESTDIR)$(LIBDIR)/libfpemu.so.$(VERSION)
	ln -sf libfpemu.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libfpemu.so.$(SOVERSION)
	ln -sf libfpemu.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libfpemu.so
	install -m 644 emu/fpemu.h $(DESTDIR)$(INCLUDEDIR)/fpemu.h
	install -m 644 $(INSTALL_HEADERS) $(DESTDIR)$(INCLUDEDIR)/fpemu/
	$(call fpemu_pc,$(PREFIX),$(LIBDIR),$(INCLUDEDIR)) > $(DESTDIR)$(LIBDIR)/pkgconfig/fpemu.pc
	sed -e 's|@VERSION@|$(VERSION)|' -e 's|@DATADIR@|$(DATADIR)|' docs/fpemu.1 > $(DESTDIR)$(MANDIR)/man1/fpemu.1
	install -m 644 experiments/data/digits.csv.gz $(DESTDIR)$(DATADIR)/digits.csv.gz
	install -m 644 $(INSTALL_GP) $(DESTDIR)$(DATADIR)/reports/
	install -m 644 LICENSE README.md CHANGELOG.md $(DESTDIR)$(DOCDIR)/
	install -m 644 experiments/data/README.md $(DESTDIR)$(DOCDIR)/digits-README.md
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)$(INCLUDEDIR)/fpemu $(DESTDIR)$(DATADIR)/reports $(DESTDIR)$(DATADIR) $(DESTDIR)$(DOCDIR) 2>/dev/null

clean:
	rm -rf $(BUILD) $(BINDIR)

-include $(wildcard mk/*.mk)
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
