/* SPDX-License-Identifier: MIT */
/* fuzz_state.c: the training state inside checkpoint.bin (trn_state_load:
 * settings lines, then binary parameters, optimiser, scaler and amax
 * histories) and the gzip decoder the data loader uses (trn_gunzip). The
 * first byte picks the parser; a state that loads takes a training step
 * and an evaluation (issue 26: what a loaded state holds reaches the
 * engine, so every field trn_state_load lets through must be safe to step
 * from), is saved again and must load again, at the step it reached.
 * Checks: no crash, no sanitizer report, rejections have a message.
 *
 * Speed: states need the whole input (a seed state is 57 KB, so -max_len
 * stays large), but a gzip stream of that size decodes to hundreds of KB
 * bit by bit, which made most of the run decoding mutated copies of the
 * digits file. The gzip branch decodes the first GZ_MAX bytes of its input
 * (a longer stream is cut there, trailer included): enough for every block
 * type, code table and back-reference distance (a few KB of input can
 * expand past the 32 KB window); the decoder's cost is in its output, not
 * in new paths. */
#include "fuzz_common.h"
#include "train.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    if (n < 1 || n > 1 << 20) return 0;
    int which = d[0] & 1;
    d++, n--;
    if (which == 0) {
        enum { GZ_MAX = 4096 };
        if (n > GZ_MAX) n = GZ_MAX;
        unsigned char *out = NULL;
        size_t ol = 0;
        if (trn_gunzip(d, n, (size_t)1 << 20, &out, &ol) == 0 && ol && !out) abort();
        free(out);
        return 0;
    }
    trn_run *r = NULL;
    char err[512];
    err[0] = 0;
    if (trn_state_load(&r, d, n, err, sizeof err)) {
        if (!err[0]) { fprintf(stderr, "trn_state_load rejected without a message\n"); abort(); }
        if (r) trn_close(r);
        return 0;
    }
    long step = trn_steps_done(r);
    if (step < 0 || step > TRN_STEPS_MAX) { fprintf(stderr, "a state at step %ld loaded\n", step); abort(); }
    trn_step_rec rec;
    if (trn_step(r, &rec, err, sizeof err) == 0) {
        if (rec.step != step + 1) abort();
        trn_tensor_rec tr;
        for (int i = 0; i < trn_tensor_count(r); i++) trn_tensor_get(r, i, &tr);
    } else if (!err[0]) {
        abort();
    }
    double loss, acc;
    trn_eval(r, &loss, &acc);
    unsigned char *b = NULL;
    size_t bl = 0;
    if (trn_state_save(r, &b, &bl)) abort();
    long after = trn_steps_done(r);
    trn_close(r);
    r = NULL;
    if (after <= TRN_STEPS_MAX) {
        if (trn_state_load(&r, b, bl, err, sizeof err)) { fprintf(stderr, "a saved state does not load: %s\n", err); abort(); }
        if (trn_steps_done(r) != after) abort();
        trn_close(r);
    }
    free(b);
    return 0;
}
