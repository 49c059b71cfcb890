# SPDX-License-Identifier: MIT
# mk/gpu.mk: bin/fpemu-gpu (CUDA kernels in gpu/kernels.cu + the host
# harness in gpu/host/*.c and gpu/fpemu_gpu.c), the harness library the CPU
# tests link (plain C, no nvcc needed), and the SASS check.
#   make gpu        build bin/fpemu-gpu (needs nvcc)
#   make gpu-sass   show and check each kernel's tensor-core SASS (cuobjdump)
#   make gpu-tools  fetch cuobjdump + nvdisasm from PyPI into $(BUILD)/gpu-tools
NVCC ?= $(shell command -v nvcc 2>/dev/null)
GPU_GENCODE ?= -gencode arch=compute_80,code=[sm_80,compute_80] \
  -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a
NVCC_FLAGS ?= -O2 -std=c++17
GPU_BIN := $(BINDIR)/fpemu-gpu
GPU_HOST_SRC := $(wildcard gpu/host/*.c)
GPU_HOST_LIB := $(BUILD)/libfpemugpuhost.a
GPU_HOST_TESTS := $(filter $(BUILD)/tests/t_gpu_host%,$(TEST_BINS))
GPU_TOOLS := $(BUILD)/gpu-tools
# tests/t_gpu_sass.sh looks here for cuobjdump/nvdisasm as well as on PATH
export FPEMU_GPU_TOOLS = $(abspath $(GPU_TOOLS))/nvidia/cu13/bin

.PHONY: gpu gpu-sass gpu-tools gpu-tools-soft gpu-note

$(GPU_HOST_LIB): $(call obj,$(GPU_HOST_SRC))
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

# Host-side tests of the harness link the harness library.
$(GPU_HOST_TESTS): $(BUILD)/tests/%: $(BUILD)/tests/%.o $(GPU_HOST_LIB) $(TESTLIB) $(ALL_LIBS)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(GPU_HOST_LIB) $(TESTLIB) $(ALL_LIBS) $(LDLIBS_ALL)

ifneq ($(NVCC),)
all: $(GPU_BIN)
gpu: $(GPU_BIN)
test: $(GPU_BIN) gpu-tools-soft

$(BUILD)/gpu/kernels.o: gpu/kernels.cu gpu/kinds.h gpu/gpu_rt.h gpu/host/layout.h | deps-deb
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(NVCC) $(NVCC_FLAGS) $(GPU_GENCODE) -Igpu -c $< -o $@ 2>$@.log; rc=$$?; \
	  grep -v 'C7519' $@.log >&2; rm -f $@.log; exit $$rc
# (C7519 is ptxas noting that it placed the warpgroup.arrive the runtime-length
# wgmma chain needs: information, not a problem; everything else is shown.)

# nvcc links: it adds the static CUDA runtime (libcuda is opened at run time,
# so the program starts, and says "no CUDA device", where there is no driver).
$(GPU_BIN): $(BUILD)/gpu/fpemu_gpu.o $(BUILD)/gpu/kernels.o $(GPU_HOST_LIB) $(LIBFPEMU)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(NVCC) -o $@ $^ -lm -lpthread

gpu-sass: $(GPU_BIN) gpu-tools
	FPEMU_SASS_VERBOSE=1 sh tests/t_gpu_sass.sh

# cuobjdump needs nvdisasm; both come as PyPI wheels when the CUDA
# toolkit on the machine lacks them.
gpu-tools:
	@if [ -x "$(FPEMU_GPU_TOOLS)/cuobjdump" ] && [ -x "$(FPEMU_GPU_TOOLS)/nvdisasm" ]; then :; \
	elif command -v cuobjdump >/dev/null && command -v nvdisasm >/dev/null; then :; \
	else echo "gpu-tools: installing cuobjdump and nvdisasm (PyPI) into $(GPU_TOOLS)"; \
	  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps --timeout 30 --retries 1 \
	    --target $(GPU_TOOLS) nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm && \
	  chmod +x $(FPEMU_GPU_TOOLS)/cuobjdump $(FPEMU_GPU_TOOLS)/nvdisasm; fi
# the same for `make test`, never failing it (the SASS test then skips)
gpu-tools-soft:
	-@$(MAKE) --no-print-directory gpu-tools 2>/dev/null || echo "gpu-tools: not installed; tests/t_gpu_sass.sh will skip"
else
all: gpu-note
gpu: gpu-note
gpu-sass: gpu-note
gpu-note:
	@echo "gpu: nvcc not found: bin/fpemu-gpu not built, its tests skip (set NVCC=/path/to/nvcc)"
endif
