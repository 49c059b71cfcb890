# SPDX-License-Identifier: MIT
# The Python package (python/, docs/python.md): `pip install ./python`
# bundles $(BUILD)/libfpemu.so.VERSION, building it with `make python-lib`
# when it is missing. tests/t_python.sh (make test) runs python/tests.
.PHONY: python-lib
python-lib: $(LIBFPEMU_SO)
