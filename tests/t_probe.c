/* SPDX-License-Identifier: MIT */
/* t_probe.c: the black-box probe recovers every preset's own parameters
 * exactly (for every input format the preset supports, f32 and f16
 * outputs), and parameters changed through options; it names the matching
 * presets; it copes with a box that refuses long vectors. */
#include <stdio.h>
#include <string.h>
#include "mma.h"
#include "tap.h"

static const fpemu_format *F(const char *n) {
    const fpemu_format *f = n ? fpemu_format_get(n, NULL, 0) : NULL;
    if (n && !f) bail("format %s missing", n);
    return f;
}

/* diag() a multi-line buffer one line at a time (a bare "ok=1" line would read as TAP). */
static void diag_lines(const char *buf) {
    char line[256];
    while (*buf) {
        size_t n = strcspn(buf, "\n");
        snprintf(line, sizeof line, "%.*s", (int)(n < 255 ? n : 255), buf);
        diag("  %s", line);
        buf += n + (buf[n] == '\n');
    }
}

static int same(const fpemu_mma_probe_result *g, const fpemu_mma_probe_result *e, char *why, size_t len) {
    why[0] = 0;
    if (g->block != e->block) snprintf(why, len, "block %d != %d", g->block, e->block);
    else if (g->nfrac != e->nfrac) snprintf(why, len, "nfrac %d != %d", g->nfrac, e->nfrac);
    else if (strcmp(g->align_round, e->align_round)) snprintf(why, len, "align %s != %s", g->align_round, e->align_round);
    else if (strcmp(g->out_round, e->out_round)) snprintf(why, len, "out_round %s != %s", g->out_round, e->out_round);
    else if (g->out_mant != e->out_mant) snprintf(why, len, "out_mant %d != %d", g->out_mant, e->out_mant);
    else if (strcmp(g->normalize, e->normalize)) snprintf(why, len, "normalize %s != %s", g->normalize, e->normalize);
    else if (strcmp(g->subnormals, e->subnormals)) snprintf(why, len, "subnormals %s != %s", g->subnormals, e->subnormals);
    return why[0] == 0;
}

static void check(const fpemu_mma_model *m, const char *label) {
    fpemu_mma_probe_result got, want;
    char why[200], buf[1024];
    int rc = fpemu_mma_probe(fpemu_mma_model_blackbox, (void *)m, m->fa, m->fb, m->fc, m->fd, 64, &got);
    fpemu_mma_probe_expected(m, 64, &want);
    if (!ok(rc == 0 && same(&got, &want, why, sizeof why), "probe recovers %s (%s)", label, m->device)) {
        fpemu_mma_probe_format(&got, buf, sizeof buf);
        diag("%s", why);
        diag_lines(buf);
    }
    /* the preset itself is among the matches (if it is a named preset) */
    char list[200];
    snprintf(list, sizeof list, ",%s,", got.matches);
    char key[64];
    snprintf(key, sizeof key, ",%s,", m->name);
    ok(strstr(list, key) != NULL, "%s: matches=%s names %s", label, got.matches, m->name);
}

typedef struct { int max; const fpemu_mma_model *m; } limited;
static int limited_box(void *user, const uint64_t *a, const uint64_t *b, int k, uint64_t c, uint64_t *d) {
    limited *l = user;
    if (k > l->max) return 1;
    return fpemu_mma_model_blackbox((void *)l->m, a, b, k, c, d);
}

int main(void) {
    static const char *devs[] = {"v100", "t4", "a100", "ada", "h100", "b200", "exact", "fma-seq", "pairwise"};
    static const char *ins[][2] = {{"f16", "f16"}, {"bf16", "bf16"}, {"tf32", "tf32"}, {"f32", "f32"}, {"e4m3", "e4m3"},
                                   {"e5m2", "e4m3"}, {"e2m1", "e2m1"}, {"e3m2", "e2m3"}};
    static const char *outs[] = {"f32", "f16"};
    int n = 0;
    for (size_t i = 0; i < sizeof devs / sizeof devs[0]; i++)
        for (size_t j = 0; j < sizeof ins / sizeof ins[0]; j++)
            for (size_t o = 0; o < 2; o++) {
                fpemu_mma_model m;
                if (fpemu_mma_model_preset(&m, devs[i], F(ins[j][0]), F(ins[j][1]), F(outs[o]), F(outs[o]), NULL, 0)) continue;
                /* exact/fma-seq/pairwise: keep to a few input kinds */
                if (i >= 6 && (j >= 2 && j != 4)) continue;
                /* fp6/fp4 products span < 2^8 and an f16 c < 2^16: nfrac = 25
                 * cannot show in any vector of these formats (the probe
                 * reports a lower bound); nothing to compare */
                if (j >= 6 && o == 1 && i < 6) continue;
                char label[96];
                snprintf(label, sizeof label, "%s %sx%s -> %s", devs[i], ins[j][0], ins[j][1], outs[o]);
                check(&m, label);
                n++;
            }
    diag("%d preset/format combinations probed", n);

    /* parameters changed by options are recovered too */
    static const char *opts[][2] = {{"align", "rd"},      {"normalize", "each"}, {"out_round", "rne"},
                                    {"out_round", "rup"}, {"out_round", "rdn"},  {"out_round", "rna"},
                                    {"subnormals", "flush"}, {"nfrac", "26"},    {"block", "2"},
                                    {"block", "12"},      {"out_mant", "16"}};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        fpemu_mma_model m;
        char err[200];
        if (fpemu_mma_model_preset(&m, "h100", F("f16"), F("f16"), F("f32"), F("f32"), err, sizeof err)) bail("%s", err);
        if (fpemu_mma_model_set(&m, opts[i][0], opts[i][1], err, sizeof err)) bail("%s", err);
        snprintf(m.name, sizeof m.name, "custom");
        char label[96];
        snprintf(label, sizeof label, "h100 f16 with %s=%s", opts[i][0], opts[i][1]);
        fpemu_mma_probe_result got, want;
        char why[200], buf[1024];
        fpemu_mma_probe(fpemu_mma_model_blackbox, &m, m.fa, m.fb, m.fc, m.fd, 64, &got);
        fpemu_mma_probe_expected(&m, 64, &want);
        if (!ok(same(&got, &want, why, sizeof why), "probe recovers %s", label)) {
            fpemu_mma_probe_format(&got, buf, sizeof buf);
            diag("%s", why);
            diag_lines(buf);
        }
        ok(!strcmp(got.matches, "none"), "%s matches no preset (%s)", label, got.matches);
    }

    /* The published vectors' readings through the probe (Fasi et al. 2021;
     * docs/tensor-cores.md): V100 no guard bit and non-monotonic, A100 one guard bit. */
    {
        fpemu_mma_model v, a;
        fpemu_mma_model_preset(&v, "v100", F("f16"), F("f16"), NULL, NULL, NULL, 0);
        fpemu_mma_model_preset(&a, "a100", F("f16"), F("f16"), NULL, NULL, NULL, 0);
        fpemu_mma_probe_result rv, ra;
        fpemu_mma_probe(fpemu_mma_model_blackbox, &v, v.fa, v.fb, v.fc, v.fd, 64, &rv);
        fpemu_mma_probe(fpemu_mma_model_blackbox, &a, a.fa, a.fb, a.fc, a.fd, 64, &ra);
        is_int(rv.guard, 0, "v100: 0 extra alignment bits");
        is_int(ra.guard, 1, "a100: 1 extra alignment bit");
        is_int(rv.monotonic, 0, "v100: non-monotonic accumulation seen");
        is_int(ra.monotonic, 1, "a100: monotonic on the same vector");
        ok(rv.carry_bits >= 3, "v100: at least 3 carry bits (%d)", rv.carry_bits);
        is_str(ra.matches, "t4,a100,ada", "a100 f16 parameters match t4, a100 and ada");
        char buf[1024];
        fpemu_mma_probe_format(&rv, buf, sizeof buf);
        ok(strstr(buf, "block=4\n") && strstr(buf, "nfrac=23\n") && strstr(buf, "align_round=rz\n") &&
               strstr(buf, "out_round=rz\n") && strstr(buf, "out_mant=23\n") && strstr(buf, "normalize=end\n") &&
               strstr(buf, "subnormals=kept\n") && strstr(buf, "matches=v100\n"),
           "v100 key=value lines");
        diag_lines(buf);
    }

    /* a box that refuses k > 20: the h100 fp8 block (32) is out of reach, the rest still works */
    {
        fpemu_mma_model m;
        fpemu_mma_model_preset(&m, "h100", F("e4m3"), F("e4m3"), NULL, NULL, NULL, 0);
        limited l = {20, &m};
        fpemu_mma_probe_result r;
        int rc = fpemu_mma_probe(limited_box, &l, m.fa, m.fb, m.fc, m.fd, 64, &r);
        is_int(rc, 0, "limited box: probe completes");
        is_int(r.block, 0, "limited box: no block boundary below k = 20");
        is_int(r.nfrac, 13, "limited box: nfrac still 13");
        is_int(r.out_mant, 13, "limited box: out_mant still 13");
        ok(strstr(r.note, "refused") != NULL, "limited box: note says the box refused (%s)", r.note);
    }
    /* fpemu_mma_probe_match with len 0 writes nothing (it wrote buf[0]) */
    {
        fpemu_mma_model m;
        fpemu_mma_model_preset(&m, "a100", F("f16"), F("f16"), NULL, NULL, NULL, 0);
        fpemu_mma_probe_result r;
        fpemu_mma_probe_expected(&m, 64, &r);
        ok(fpemu_mma_probe_match(&r, m.fa, m.fb, NULL, NULL, NULL, 0) == NULL, "fpemu_mma_probe_match(buf = NULL, len = 0) writes nothing");
        char small[4] = "xyz";
        fpemu_mma_probe_match(&r, m.fa, m.fb, NULL, NULL, small, 4);
        is_str(small, "t4,", "len 4: truncated to 3 characters and the terminator");
    }

    return done_testing();
}
