# SPDX-License-Identifier: MIT
# mk/experiments.mk: `make experiments`, the report in reports/latest/.
#
# ---- Contract for report sections (each issue adds its own) -----------------
# A section is a make target in your own fragment mk/NAME.mk:
#
#     EXPERIMENT_SECTIONS += mysection
#     EXPERIMENT_RANK_mysection := 40          # optional, see "Order" below
#     experiments-mysection: $(BINDIR)/fpemu
#     	rm -rf $(REPORT_DIR)/mysection.tmp && mkdir -p $(REPORT_DIR)/mysection.tmp
#     	...write data, PNG/SVG plots, fragment.html, fragment.md there...
#     	$(call experiments_publish,mysection)
#
# - `make experiments-mysection` alone (re)writes $(REPORT_DIR)/mysection/
#   (REPORT_DIR defaults to reports/latest). Write into mysection.tmp and
#   publish it with $(call experiments_publish,mysection) (a rename), so a
#   failed run never leaves a half-written section.
# - The folder holds fragment.html: an HTML snippet (no <html>/<body>)
#   starting with an <h2> heading, then the plots (<img src="x.png">, link the
#   SVG if you make one) and, for every plot, a sentence saying what it shows
#   and what was expected. Optionally fragment.md, the same in Markdown (an
#   `## ` heading, `![caption](x.png)`), for summary.md. Paths in both are
#   relative to the section folder: the assembler prefixes SECTION/ to every
#   relative src="..."/href="..." (HTML) and ](...) link (Markdown) when it
#   inlines them.
# - The report opens with its verdict. Optionally headline.html (a few lines:
#   what the section ran and found, with the numbers; no heading) and
#   keyplots.html (one <figure> per plot that matters, at most 3 or 4 for
#   the whole report), and their .md twins: the assembler puts every
#   section's headline, then every section's key plots, at the top.
# - Optionally brief.html (and brief.md): a short form of the section, with
#   the same <h2> heading. The main page then shows the brief, and the whole
#   fragment goes on a page of its own, $(REPORT_DIR)/SECTION.html (and
#   SECTION.md), linked from it (the catalogue does this).
# - `make experiments` builds bin/fpemu, runs every experiments-SECTION in
#   order (a failing section fails the run), then reports/assemble.sh writes
#   $(REPORT_DIR)/index.html (opens from disk: relative links only),
#   $(REPORT_DIR)/summary.md and the sections' own pages from the fragments,
#   and copies the whole folder to reports/YYYY-MM-DD/. Both folders are
#   ignored by git.
# - Order: by EXPERIMENT_RANK_SECTION (training 30, errk 40, default 50,
#   catalogue 90: its brief comes last), then by name. Sections are listed
#   lazily, so fragments included after this one count too.
# - Sections must be deterministic (fixed seeds) and keep to the 2-core
#   machine: a few minutes each at most.
# ------------------------------------------------------------------------------

REPORT_ROOT ?= reports
REPORT_DIR ?= $(REPORT_ROOT)/latest
export REPORT_DIR

# $(call experiments_publish,SECTION): replace $(REPORT_DIR)/SECTION by
# $(REPORT_DIR)/SECTION.tmp.
experiments_publish = rm -rf $(REPORT_DIR)/$(1) && mv $(REPORT_DIR)/$(1).tmp $(REPORT_DIR)/$(1)

# Sections sorted by "RANK:NAME" (ranks are two digits).
experiments_rank = $(or $(EXPERIMENT_RANK_$(1)),50)
EXPERIMENT_ORDER = $(foreach k,$(sort $(foreach s,$(sort $(EXPERIMENT_SECTIONS)),$(call experiments_rank,$(s)):$(s))),$(lastword $(subst :, ,$(k))))

.PHONY: experiments experiments-list
experiments: $(BINDIR)/fpemu
	@$(MAKE) --no-print-directory $(addprefix experiments-,$(EXPERIMENT_ORDER))
	$(Q)reports/assemble.sh $(REPORT_DIR) $(EXPERIMENT_ORDER)
	$(Q)d=$(REPORT_ROOT)/$$(date +%Y-%m-%d); rm -rf $$d.tmp && cp -r $(REPORT_DIR) $$d.tmp && rm -rf $$d && mv $$d.tmp $$d \
	  && echo "experiments: report in $(REPORT_DIR)/index.html and $(REPORT_DIR)/summary.md (copy in $$d)"

experiments-list:
	@echo $(EXPERIMENT_ORDER)

# ---- section: catalogue (format table and rounding-error plots) -------------
EXPERIMENT_SECTIONS += catalogue
EXPERIMENT_RANK_catalogue := 90
.PHONY: experiments-catalogue
experiments-catalogue: $(BINDIR)/fpemu | deps
	@$(if $(Q),echo "  REPORT  $(REPORT_DIR)/catalogue")
	$(Q)rm -rf $(REPORT_DIR)/catalogue.tmp && mkdir -p $(REPORT_DIR)/catalogue.tmp
	$(Q)reports/catalogue.sh $(FPEMU_BIN) $(REPORT_DIR)/catalogue.tmp
	$(Q)$(call experiments_publish,catalogue)
