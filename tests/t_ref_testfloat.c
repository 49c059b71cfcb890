/* SPDX-License-Identifier: MIT */
/* t_ref_testfloat.c: the MPFR reference against Berkeley TestFloat 3's
 * vectors (level 1, tininess after rounding), an implementation no one on
 * this project wrote: f16 add, mul, div, sqrt in rne and rtz, f32 -> f16
 * and f32 -> bf16 in rne; results (NaN as any NaN) and flags. The vectors
 * are in the repository, tests/data/testfloat/ (README and licence there;
 * $FPEMU_TESTFLOAT names another folder); a missing file fails its test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "ref.h"
#include "tap.h"

typedef struct { const char *file, *fmt, *src; ref_opcode op; const char *mode; } tf_file;

static const tf_file files[] = {
    {"f16_add_rnear_even_L1", "f16", 0, REF_ADD, "rne"}, {"f16_add_rminMag_L1", "f16", 0, REF_ADD, "rtz"},
    {"f16_mul_rnear_even_L1", "f16", 0, REF_MUL, "rne"}, {"f16_mul_rminMag_L1", "f16", 0, REF_MUL, "rtz"},
    {"f16_div_rnear_even_L1", "f16", 0, REF_DIV, "rne"}, {"f16_div_rminMag_L1", "f16", 0, REF_DIV, "rtz"},
    {"f16_sqrt_rnear_even_L1", "f16", 0, REF_SQRT, "rne"}, {"f16_sqrt_rminMag_L1", "f16", 0, REF_SQRT, "rtz"},
    {"f32_to_f16_rnear_even_L1", "f16", "f32", REF_CONVERT, "rne"},
    {"f32_to_bf16_rnear_even_L1", "bf16", "f32", REF_CONVERT, "rne"},
};

int main(void) {
    char dir[4096];
    const char *env = getenv("FPEMU_TESTFLOAT"), *root = getenv("FPEMU_ROOT");
    if (env) snprintf(dir, sizeof dir, "%s", env);
    else snprintf(dir, sizeof dir, "%s/tests/data/testfloat", root ? root : ".");
    char path[4200];
    int n = (int)(sizeof files / sizeof files[0]);
    plan(n);
    ref_ctx r;
    if (ref_ctx_init(&r)) bail("ref_ctx_init");
    for (int i = 0; i < n; i++) {
        const tf_file *t = &files[i];
        const fpemu_format *f = fpemu_format_get(t->fmt, NULL, 0);
        const fpemu_format *s = t->src ? fpemu_format_get(t->src, NULL, 0) : f;
        ref_format rf;
        ref_format_init(&rf, f);
        r.round = (fpemu_round)fpemu_round_parse(t->mode);
        snprintf(path, sizeof path, "%s/%s.txt.gz", dir, t->file);
        gzFile p = gzopen(path, "rb");
        if (!p) {
            ok(0, "%s: cannot read %s", t->file, path);
            continue;
        }
        int arity = ref_op_arity(t->op);
        long lines = 0, bad = 0, malformed = 0;
        char line[256];
        while (gzgets(p, line, sizeof line)) {
            unsigned long long v[5];
            int k = sscanf(line, "%llx %llx %llx %llx", &v[0], &v[1], &v[2], &v[3]);
            if (k != arity + 2) { malformed++; continue; }
            lines++;
            uint64_t x[3] = {v[0], v[1], 0};
            unsigned fl;
            uint64_t got = ref_op(&r, f, t->op, x, s, &fl);
            uint64_t want = v[arity];
            unsigned wfl = (unsigned)v[arity + 1];
            int same = (got == want || (ref_is_nan(&rf, got) && ref_is_nan(&rf, want))) && fl == wfl;
            if (!same && bad++ < 5)
                diag("%s: %s => ref %0*llX %02X", t->file, strtok(line, "\n"), f->container / 4, (unsigned long long)got, fl);
        }
        int zerr;
        gzerror(p, &zerr);
        int prc = gzclose(p) != Z_OK || (zerr != Z_OK && zerr != Z_STREAM_END);
        ok(bad == 0 && malformed == 0 && lines > 0 && prc == 0, "%s: %ld vectors, %ld mismatches%s", t->file, lines, bad,
           malformed ? " (malformed lines)" : "");
    }
    ref_ctx_clear(&r);
    return done_testing();
}
