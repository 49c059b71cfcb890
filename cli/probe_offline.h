/* SPDX-License-Identifier: MIT */
/* probe_offline.h: `fpemu probe --plan/--answers/--state/--save`, the
 * black-box probe for a device reachable only through files (a batch job
 * queue). See probe_offline.c and docs/tensor-cores.md ("The offline probe"). */
#ifndef FPEMU_PROBE_OFFLINE_H
#define FPEMU_PROBE_OFFLINE_H
#include "mma.h"

#define PROBE_OFFLINE_MAX_ANSWERS 256

typedef struct {
    int active;                /* one of the options below was given */
    const char *plan, *state, *save;
    const char *answers[PROBE_OFFLINE_MAX_ANSWERS];
    int nanswers;
    int from_state;            /* argv came from STATE/options */
    char **stored_argv;        /* that argv and the text it points into, */
    char *stored_text;         /* freed by probe_offline_release */
} probe_offline_opts;

/* Take --plan FILE, --answers FILE (repeatable), --state DIR and --save FILE
 * out of argv (argv[0] is the subcommand; *argc shrinks). With --state DIR
 * whose DIR/options exists: when nothing else is left, *argv becomes the
 * stored options; otherwise the options left must equal the stored ones.
 * Returns 0, or 2 after a message. */
int probe_offline_take(const char *sub, int *argc, char ***argv, probe_offline_opts *po);
/* Free what probe_offline_take kept (the stored options); argv from it is
 * then gone. */
void probe_offline_release(probe_offline_opts *po);

/* Run the offline probe. m: the model bound to the formats (the prior
 * when have_prior, else only the formats count); argc/argv: the options
 * left by probe_offline_take (stored in DIR/options). Prints key=value
 * lines; returns the exit status (0, or 2 after a message). */
int probe_offline_run(const char *sub, const probe_offline_opts *po, const fpemu_mma_model *m, int have_prior,
                      int kmax, int argc, char **argv);

#endif
