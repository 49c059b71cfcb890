# SPDX-License-Identifier: MIT
# mk/mma.mk: targets of the tensor-core models and GEMM (owner: mma).

# ---- section: errk (tensor-core accumulation error against K) ---------------
EXPERIMENT_SECTIONS += errk
EXPERIMENT_RANK_errk := 40
.PHONY: experiments-errk
experiments-errk: $(BINDIR)/fpemu | deps
	@$(if $(Q),echo "  REPORT  $(REPORT_DIR)/errk")
	$(Q)rm -rf $(REPORT_DIR)/errk.tmp && mkdir -p $(REPORT_DIR)/errk.tmp
	$(Q)reports/errk.sh $(FPEMU_BIN) $(REPORT_DIR)/errk.tmp
	$(Q)$(call experiments_publish,errk)
