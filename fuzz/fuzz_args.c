/* SPDX-License-Identifier: MIT */
/* fuzz_args.c: command-line arguments. The input is NUL-separated
 * arguments; the first byte picks the parser: `fpemu run` / `fpemu verify`
 * options (vec_parse_args), `fpemu formats` (cmd_formats, output to
 * /dev/null), or the spec of `fpemu check` (check_plan_build: formats, ops
 * and modes lists). Checks: no crash, no hang, rejections have a message.
 *
 * Speed: a plan's case sets (grids of every format and conversion pair)
 * take milliseconds to build and depend only on the spec; most inputs the
 * fuzzer derives from a check spec repeat it (the mutation hit a byte after
 * the third argument, or the kind byte's other bits). A spec already built
 * (same kind, formats, ops and modes) is not built again. */
#include "fuzz_common.h"
#include "cli.h"
#include "vector.h"
#include "check.h"

#define SEEN_N (1 << 18) /* hashes of built specs; when half full, specs are built every time */
static uint64_t seen[SEEN_N];
static int nseen;

static uint64_t fnv(uint64_t h, const char *s) {
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
    return (h ^ 0xFF) * 1099511628211u; /* end of string: "ab","c" != "a","bc" */
}

/* 1 if this spec was built before (else it is recorded). */
static int seen_spec(const check_spec *sp) {
    uint64_t h = fnv(fnv(fnv(1469598103934665603u ^ (uint64_t)sp->kind, sp->formats), sp->ops), sp->modes);
    if (!h) h = 1;
    for (size_t i = 0; i < SEEN_N; i++) {
        uint64_t *e = &seen[(h + i) & (SEEN_N - 1)];
        if (*e == h) return 1;
        if (!*e) {
            if (nseen >= SEEN_N / 2) return 0;
            *e = h, nseen++;
            return 0;
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    if (n < 1 || n > 2048) return 0;
    int which = d[0] % 4;
    char *s = fz_str(d + 1, n - 1);
    char *argv[34];
    int argc = 1;
    argv[0] = which == 0 ? "run" : which == 1 ? "verify" : which == 2 ? "formats" : "check";
    for (char *p = s; p < s + (n - 1) && argc < 33; p += strlen(p) + 1) argv[argc++] = p;
    argv[argc] = NULL;
    if (which <= 1) {
        vec_cfg cfg;
        memset(&cfg, 0, sizeof cfg);
        int rc = vec_parse_args(argc, argv, which, &cfg);
        if (rc != 0 && rc != 2 && rc != -1) abort();
    } else if (which == 2) {
        for (int i = 1; i < argc; i++)
            if (!strncmp(argv[i], "--p", 3)) { free(s); return 0; } /* --points N: up to 10^7 lines, slow, not a bug */
        int rc = cmd_formats(argc, argv);
        fflush(stdout);
        if (rc != 0 && rc != 2) abort();
    } else {
        check_spec sp;
        memset(&sp, 0, sizeof sp);
        sp.formats = argc > 1 ? argv[1] : "f16";
        sp.ops = argc > 2 ? argv[2] : "add";
        sp.modes = argc > 3 ? argv[3] : "rne";
        sp.kind = (check_kind)(d[0] / 4 % 3);
        sp.random_n = 1000;
        sp.seed = 1;
        if (seen_spec(&sp)) { free(s); return 0; }
        check_plan pl;
        char err[512], note[512];
        err[0] = 0;
        if (check_plan_build(&pl, &sp, err, sizeof err, note, sizeof note) == 0) {
            for (int j = 0; j < pl.njobs && j < 8; j++) {
                uint64_t ops[3];
                if (pl.jobs[j].count) check_case(&pl, &pl.jobs[j], pl.jobs[j].count - 1, ops);
            }
            check_plan_free(&pl);
        } else if (!err[0]) abort();
    }
    free(s);
    return 0;
}
