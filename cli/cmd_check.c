/* SPDX-License-Identifier: MIT */
/* cmd_check.c: `fpemu check`, the differential checker: emu/ against the
 * MPFR reference (ref/), exhaustive, structured or random, sharded and
 * threaded. The engine is ref/check.c; this file parses options, reports
 * progress on stderr and prints the mismatches as replayable lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "cli.h"

static void usage(FILE *out) {
    fprintf(out,
        "usage: fpemu check --format FMTS --op OPS [--round MODES]\n"
        "                   [--exhaustive | --structured | --random N] [--seed S]\n"
        "                   [--shard I/N] [--threads T] [--sat] [--ftz] [--daz]\n"
        "                   [--tininess before|after] [--sr-bits R] [--max-print K]\n"
        "                   [--quiet] [--list]\n"
        "\n"
        "Runs the emulator against the MPFR reference and prints every mismatch as a\n"
        "replayable line (at most K, default 20), then `N cases, M mismatches`.\n"
        "Exit status: 0 no mismatch, 1 mismatches, 2 bad usage.\n"
        "\n"
        "  --format FMTS   comma list of formats (names, aliases, custom specs), or\n"
        "                  all, small (<= 8 bits), wide (> 8 bits)\n"
        "  --op OPS        comma list: add sub mul div sqrt fma (mulAdd); to_G (convert\n"
        "                  each listed format F to G: F_to_G); from_G (G_to_F);\n"
        "                  convert (= to_f32,from_f32); arith (the six operations);\n"
        "                  conv (to every listed format and f32/f64, from f32/f64);\n"
        "                  all (= arith,conv)\n"
        "  --round MODES   comma list of rne rna rtz rup rdn rto sr (TestFloat spellings\n"
        "                  too), or all (the seven); default rne. In sr every case has\n"
        "                  its own 64-bit draw: 40%% of them straddle one of the\n"
        "                  reference's decisions (top R bits T - 1 or T), the rest\n"
        "                  are uniform; the draws taken must agree too\n"
        "  --sr-bits R     sr: R random bits (1..64) for every case; default: cases\n"
        "                  cycle through R = 64, 1, 8, 13, 23\n"
        "  --exhaustive    every input / pair / triple (refused above 2^36 cases a job;\n"
        "                  jobs above 2^24 named only through arith/conv/all are left out)\n"
        "  --structured    TestFloat-style grid: exponents x significand patterns, all\n"
        "                  boundaries and neighbours (default)\n"
        "  --random N      N seeded random cases per format x op x mode\n"
        "  --seed S        seed of the random and sampled cases and of the sr draws\n"
        "                  (default 1)\n"
        "  --shard I/N     run part I (0-based) of N disjoint parts of the same cases\n"
        "  --threads T     worker threads (default: online CPUs)\n"
        "  --sat --ftz --daz --tininess before|after   policies (as in fpemu run)\n"
        "  --quiet         no progress on stderr\n"
        "  --list          print the jobs and their case counts, run nothing\n");
}

/* Test hook (documented in docs/verification.md, not in the help): a device under
 * test that is emu/ with a planted fault, to show the checker catches it. */
typedef enum { BUG_NONE, BUG_TIES, BUG_UNDERFLOW, BUG_SR, BUG_SRDRAW } bug_kind;

static uint64_t dut_buggy(const check_job *j, const uint64_t *ops, fpemu_ctx *ctx, void *arg) {
    bug_kind b = *(const bug_kind *)arg;
    if (b == BUG_TIES && ctx->round == FPEMU_RNE) {
        /* ties away instead of ties to even */
        ctx->round = FPEMU_RNA;
        uint64_t r = check_dut_emu(j, ops, ctx, NULL);
        ctx->round = FPEMU_RNE;
        return r;
    }
    if (b == BUG_SR && ctx->round == FPEMU_SR) {
        /* up iff r <= frac x 2^R instead of r < frac x 2^R: the draw's top
         * R bits less one (a hardware comparator's off-by-one) */
        int R = ctx->sr_bits >= 1 && ctx->sr_bits <= 64 ? ctx->sr_bits : 64;
        const uint64_t *keep = ctx->sr_stream;
        size_t len = ctx->sr_len, pos = ctx->sr_pos;
        uint64_t d = keep && pos < len ? keep[pos] : fpemu_random64(ctx->seed, ctx->counter);
        uint64_t one = UINT64_C(1) << (64 - R);
        d = d >= one ? d - one : d;
        ctx->sr_stream = &d, ctx->sr_len = 1, ctx->sr_pos = 0;
        uint64_t r = check_dut_emu(j, ops, ctx, NULL);
        ctx->sr_stream = keep, ctx->sr_len = len, ctx->sr_pos = pos + (keep && pos < len ? ctx->sr_pos : 0);
        return r;
    }
    uint64_t c0 = ctx->counter;
    uint64_t r = check_dut_emu(j, ops, ctx, NULL);
    if (b == BUG_UNDERFLOW) ctx->flags &= ~(unsigned)FPEMU_FLAG_UNDERFLOW;
    if (b == BUG_SRDRAW && ctx->round == FPEMU_SR && ctx->counter == c0) ctx->counter++; /* a draw for every result */
    return r;
}

typedef struct progress_state { int tty; int printed; } progress_state;

static void fmt_eta(char *buf, size_t n, double s) {
    if (s < 0 || s > 1e8) snprintf(buf, n, "?");
    else if (s >= 3600) snprintf(buf, n, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
    else if (s >= 60) snprintf(buf, n, "%dm%02ds", (int)(s / 60), (int)s % 60);
    else snprintf(buf, n, "%.0fs", s);
}

static void show_progress(const check_progress *p, void *arg) {
    progress_state *st = arg;
    double rate = p->elapsed > 0 ? (double)p->done / p->elapsed : 0;
    char eta[32];
    fmt_eta(eta, sizeof eta, rate > 0 ? (double)(p->total - p->done) / rate : -1);
    int final = p->done == p->total;
    if (final && !st->printed) return; /* short runs: no progress at all */
    fprintf(stderr, "%scheck: %5.1f%% %llu/%llu cases, %.3g cases/s, ETA %s, %llu mismatches%s",
            st->tty ? "\r" : "", p->total ? 100.0 * (double)p->done / (double)p->total : 100.0,
            (unsigned long long)p->done, (unsigned long long)p->total, rate, eta,
            (unsigned long long)p->mismatches, st->tty ? (final ? "\n" : "   ") : "\n");
    fflush(stderr);
    st->printed = 1;
}

static int parse_shard(const char *s, uint64_t *i, uint64_t *n) {
    const char *slash = strchr(s, '/');
    if (!slash) return -1;
    char a[32];
    size_t k = (size_t)(slash - s);
    if (k == 0 || k >= sizeof a) return -1;
    memcpy(a, s, k);
    a[k] = 0;
    unsigned long long x, y;
    if (cli_parse_u64(a, &x) || cli_parse_u64(slash + 1, &y) || y == 0 || x >= y) return -1;
    *i = x, *n = y;
    return 0;
}

int cmd_check(int argc, char **argv) {
    check_spec spec = {NULL, NULL, "rne", CHECK_STRUCTURED, 0, 1};
    check_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.keep = 20;
    cfg.shard_n = 1;
    int quiet = 0, list = 0, kinds = 0;
    bug_kind bug = BUG_NONE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define VALUE() (i + 1 < argc ? argv[++i] : NULL)
        if (cli_is_help(a)) { usage(stdout); return 0; }
        if (!strcmp(a, "--format") || !strcmp(a, "--formats")) {
            if (!(spec.formats = VALUE())) return cli_error("check", "%s needs a value (format names, all, small or wide)", a);
        } else if (!strcmp(a, "--op") || !strcmp(a, "--ops")) {
            if (!(spec.ops = VALUE())) return cli_error("check", "--op needs a value (e.g. add,mul or all)");
        } else if (!strcmp(a, "--round")) {
            if (!(spec.modes = VALUE())) return cli_error("check", "--round needs a value (e.g. rne,rtz or all)");
        } else if (!strcmp(a, "--exhaustive")) {
            spec.kind = CHECK_EXHAUSTIVE, kinds++;
        } else if (!strcmp(a, "--structured")) {
            spec.kind = CHECK_STRUCTURED, kinds++;
        } else if (!strcmp(a, "--random")) {
            const char *v = VALUE();
            unsigned long long n;
            if (!v || cli_parse_u64(v, &n) || n == 0)
                return cli_error("check", "--random: expected a positive number of cases per job, got '%s'", v ? v : "");
            spec.kind = CHECK_RANDOM, spec.random_n = n, kinds++;
        } else if (!strcmp(a, "--seed")) {
            const char *v = VALUE();
            unsigned long long n;
            if (!v || cli_parse_u64(v, &n)) return cli_error("check", "--seed: expected a non-negative integer, got '%s'", v ? v : "");
            spec.seed = n;
        } else if (!strcmp(a, "--shard")) {
            const char *v = VALUE();
            if (!v || parse_shard(v, &cfg.shard_i, &cfg.shard_n))
                return cli_error("check", "--shard: expected I/N with 0 <= I < N (e.g. 0/16), got '%s'", v ? v : "");
        } else if (!strcmp(a, "--threads")) {
            const char *v = VALUE();
            unsigned long long n;
            if (!v || cli_parse_u64(v, &n) || n == 0 || n > 256)
                return cli_error("check", "--threads: expected 1..256, got '%s'", v ? v : "");
            cfg.threads = (int)n;
        } else if (!strcmp(a, "--max-print")) {
            const char *v = VALUE();
            unsigned long long n;
            if (!v || cli_parse_u64(v, &n) || n > 1000000)
                return cli_error("check", "--max-print: expected 0..1000000, got '%s'", v ? v : "");
            cfg.keep = (size_t)n;
        } else if (!strcmp(a, "--sat")) {
            cfg.sat = 1;
        } else if (!strcmp(a, "--ftz")) {
            cfg.ftz = 1;
        } else if (!strcmp(a, "--daz")) {
            cfg.daz = 1;
        } else if (!strcmp(a, "--tininess")) {
            const char *v = VALUE();
            if (v && !strcmp(v, "before")) cfg.tininess_before = 1;
            else if (v && !strcmp(v, "after")) cfg.tininess_before = 0;
            else return cli_error("check", "--tininess: expected before or after, got '%s'", v ? v : "");
        } else if (!strcmp(a, "-tininessbefore")) {
            cfg.tininess_before = 1;
        } else if (!strcmp(a, "-tininessafter")) {
            cfg.tininess_before = 0;
        } else if (!strcmp(a, "--sr-bits")) {
            const char *v = VALUE();
            unsigned long long n;
            if (!v || cli_parse_u64(v, &n) || n < 1 || n > 64)
                return cli_error("check", "--sr-bits: expected 1..64 random bits, got '%s'", v ? v : "");
            cfg.sr_bits = (int)n;
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            quiet = 1;
        } else if (!strcmp(a, "--list")) {
            list = 1;
        } else if (!strcmp(a, "--inject-bug")) {
            const char *v = VALUE();
            if (v && !strcmp(v, "ties")) bug = BUG_TIES;
            else if (v && !strcmp(v, "underflow")) bug = BUG_UNDERFLOW;
            else if (v && !strcmp(v, "sr")) bug = BUG_SR;
            else if (v && !strcmp(v, "srdraw")) bug = BUG_SRDRAW;
            else return cli_error("check", "--inject-bug: expected ties, underflow, sr or srdraw, got '%s'", v ? v : "");
        } else {
            fprintf(stderr, "fpemu check: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        }
#undef VALUE
    }
    if (!spec.formats) return cli_error("check", "--format is required (e.g. --format e4m3,f16 or --format small)");
    if (!spec.ops) return cli_error("check", "--op is required (e.g. --op add,mul, --op to_f16 or --op all)");
    if (kinds > 1) return cli_error("check", "choose one of --exhaustive, --structured, --random N");

    check_plan pl;
    char err[1600], note[4096];
    if (check_plan_build(&pl, &spec, err, sizeof err, note, sizeof note)) return cli_error("check", "%s", err);
    if (*note && !quiet) fprintf(stderr, "fpemu check: %s\n", note);
    if (list) {
        for (int i = 0; i < pl.njobs; i++)
            printf("%s %s %llu\n", pl.jobs[i].name, fpemu_round_name(pl.jobs[i].round), (unsigned long long)pl.jobs[i].count);
        printf("%d jobs, %llu cases\n", pl.njobs, (unsigned long long)pl.total);
        check_plan_free(&pl);
        if (fflush(stdout) != 0 || ferror(stdout)) return cli_error("check", "cannot write standard output");
        return 0;
    }
    progress_state ps = {isatty(2), 0};
    if (!quiet) {
        cfg.progress = show_progress;
        cfg.progress_arg = &ps;
        cfg.progress_interval = ps.tty ? 0.5 : 10.0;
    }
    if (bug != BUG_NONE) cfg.dut = dut_buggy, cfg.dut_arg = &bug;
    check_result res;
    if (check_run(&pl, &cfg, &res, err, sizeof err)) {
        check_result_free(&res);
        check_plan_free(&pl);
        return cli_error("check", "%s", err);
    }
    char line[512];
    for (size_t k = 0; k < res.nkept; k++) {
        check_format_line(line, sizeof line, &pl, &cfg, &res.kept[k]);
        puts(line);
    }
    if (res.mismatches) {
        for (int i = 0; i < pl.njobs; i++)
            if (res.job_mismatches && res.job_mismatches[i])
                printf("# %s %s: %llu mismatches\n", pl.jobs[i].name, fpemu_round_name(pl.jobs[i].round),
                       (unsigned long long)res.job_mismatches[i]);
        if (res.nkept) {
            const check_mismatch *m = &res.kept[0];
            const check_job *j = &pl.jobs[m->job];
            char ops[80] = "";
            size_t k = 0;
            for (int i = 0; i < j->arity; i++)
                k += (size_t)snprintf(ops + k, sizeof ops - k, "%s%0*llX", i ? " " : "", j->src->container / 4,
                                      (unsigned long long)m->ops[i]);
            char sr[128] = "";
            if (j->round == FPEMU_SR && m->sr_stream) /* a caller stream, or the per-call API, whose definition it is */
                snprintf(sr, sizeof sr, " --sr-bits %d --sr-draws <(echo %016llX)%s", m->sr_bits,
                         (unsigned long long)m->draw, m->sr_stream == 2 ? "  # ran through fpemu_OP_sr" : "");
            else if (j->round == FPEMU_SR) /* the seed's stream, as the case ran */
                snprintf(sr, sizeof sr, " --sr-bits %d --seed %llu --counter %llu", m->sr_bits,
                         (unsigned long long)m->seed, (unsigned long long)m->counter);
            printf("# replay: echo '%s' | fpemu run %s --round %s%s%s%s%s%s\n", ops, j->name, fpemu_round_name(j->round),
                   cfg.sat ? " --sat" : "", cfg.ftz ? " --ftz" : "", cfg.daz ? " --daz" : "",
                   cfg.tininess_before ? " --tininess before" : "", sr);
        }
    }
    if (!quiet) {
        fprintf(stderr, "fpemu check: %llu cases in %.2f s (%.3g cases/s, %d threads)", (unsigned long long)res.cases,
                res.seconds, res.seconds > 0 ? (double)res.cases / res.seconds : 0.0, res.threads);
        if (cfg.shard_n > 1)
            fprintf(stderr, ", shard %llu/%llu: cases [%llu, %llu) of %llu", (unsigned long long)cfg.shard_i,
                    (unsigned long long)cfg.shard_n, (unsigned long long)res.first, (unsigned long long)res.last,
                    (unsigned long long)pl.total);
        fputc('\n', stderr);
    }
    printf("%llu cases, %llu mismatches\n", (unsigned long long)res.cases, (unsigned long long)res.mismatches);
    int status = res.mismatches ? 1 : 0;
    if (fflush(stdout) != 0 || ferror(stdout)) status = cli_error("check", "cannot write standard output");
    check_result_free(&res);
    check_plan_free(&pl);
    return status;
}
