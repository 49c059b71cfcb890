# SPDX-License-Identifier: MIT
# The PyTorch bridge (python/fpemu/torch.py, docs/torch.md). `make
# test-torch` installs python/requirements-torch.txt (torch, NumPy, ml_dtypes,
# pytest, pinned) into a virtual environment of its own, $(BUILD)/venv-torch
# (built in $(BUILD)/venv-torch.tmp and renamed: a failed install leaves
# none), then runs tests/t_torch.sh. PyPI's Linux torch wheel brings the CUDA
# libraries: about 3 GB to download and 5.4 GB installed, so `make deps` and
# `make test` do not install it; `make test` runs tests/t_torch.sh, which
# uses $(BUILD)/venv-torch (or $FPEMU_TORCH_PYTHON) where it exists and
# skips otherwise.
TORCH_VENV := $(BUILD)/venv-torch
.PHONY: deps-torch test-torch
deps-torch: $(TORCH_VENV)/.requirements
$(TORCH_VENV)/.requirements: python/requirements-torch.txt | deps-deb
	@echo "deps: Python packages of python/requirements-torch.txt into $(TORCH_VENV) (torch: about 3 GB from PyPI)"
	$(Q)rm -rf $(TORCH_VENV).tmp $(TORCH_VENV) && python3 -m venv $(TORCH_VENV).tmp \
	  && $(TORCH_VENV).tmp/bin/python -m pip install -q --disable-pip-version-check --no-input \
	     -r python/requirements-torch.txt \
	  && cp python/requirements-torch.txt $(TORCH_VENV).tmp/.requirements && mv $(TORCH_VENV).tmp $(TORCH_VENV) \
	  || { rm -rf $(TORCH_VENV).tmp; echo "deps: could not install python/requirements-torch.txt from PyPI into $(TORCH_VENV)" >&2; exit 1; }
test-torch: deps-torch $(BINDIR)/fpemu $(LIBFPEMU_SO)
	$(Q)FPEMU_TORCH_PYTHON=$(abspath $(TORCH_VENV))/bin/python $(PROVE) $(PROVE_FLAGS) tests/t_torch.sh
