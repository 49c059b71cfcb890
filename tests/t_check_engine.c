/* SPDX-License-Identifier: MIT */
/* t_check_engine.c: the checker's engine (ref/check.h) on a device under
 * test written here, independently and deliberately wrong: an e5m2 multiply
 * that rounds ties away from zero and flushes subnormal results to zero.
 * The engine must report it (and only real differences), pass the real
 * emulator, enumerate cases exactly once, keep shards disjoint and give the
 * same answer for any thread count. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "tap.h"

/* The faulty e5m2 multiply: the exact product (a double), then the nearest
 * e5m2 value by search with ties to the larger magnitude and no subnormal
 * results; NaN/inf handled as IEEE. Flags: inexact and overflow only. */
static uint64_t faulty_e5m2_mul(const check_job *j, const uint64_t *x, fpemu_ctx *ctx, void *arg) {
    (void)arg;
    const ref_format *F = &j->rfmt;
    double a = ref_to_double(F, x[0]), b = ref_to_double(F, x[1]), p = a * b;
    if (isnan(p)) return 0x7E;
    int neg = signbit(p) != 0;
    double m = fabs(p);
    if (isinf(m)) return neg ? 0xFC : 0x7C;
    uint64_t best = 0;
    double bd = INFINITY;
    for (uint64_t c = 0; c <= 0x7B; c++) {
        double v = ref_to_double(F, c);
        if (c && c < 0x04) continue; /* the fault: no subnormal results */
        double d = fabs(v - m);
        if (d < bd || (d == bd && v > ref_to_double(F, best))) bd = d, best = c;
    }
    if (m > 57344.0 + 8192.0) { ctx->flags |= FPEMU_FLAG_OVERFLOW | FPEMU_FLAG_INEXACT; return neg ? 0xFC : 0x7C; }
    if (bd != 0) ctx->flags |= FPEMU_FLAG_INEXACT;
    return best | (neg ? 0x80 : 0);
}

static check_result run(const check_plan *pl, check_dut_fn dut, int threads, uint64_t si, uint64_t sn, size_t keep) {
    check_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.threads = threads, cfg.shard_i = si, cfg.shard_n = sn, cfg.keep = keep, cfg.dut = dut;
    check_result res;
    char err[256];
    if (check_run(pl, &cfg, &res, err, sizeof err)) bail("check_run: %s", err);
    return res;
}

int main(void) {
    plan(17);
    char err[1024], note[1024];
    check_plan pl;
    check_spec sp = {"e5m2", "mul", "rne", CHECK_EXHAUSTIVE, 0, 1};
    if (check_plan_build(&pl, &sp, err, sizeof err, note, sizeof note)) bail("plan: %s", err);
    is_int((long long)pl.total, 65536, "e5m2 mul exhaustive: 65536 cases");

    check_result good = run(&pl, NULL, 2, 0, 1, 10);
    ok(good.cases == 65536 && good.mismatches == 0, "the emulator passes (%llu cases, %llu mismatches)",
       (unsigned long long)good.cases, (unsigned long long)good.mismatches);
    check_result_free(&good);

    check_result bad = run(&pl, faulty_e5m2_mul, 2, 0, 1, 1000000);
    ok(bad.mismatches > 0, "the faulty multiply is caught: %llu mismatches", (unsigned long long)bad.mismatches);
    /* every reported case really differs, and nothing else does */
    ref_ctx rc;
    ref_ctx_init(&rc);
    uint64_t really = 0, listed_ok = 1, tie_found = 0, sub_found = 0;
    for (uint64_t i = 0; i < 65536; i++) {
        uint64_t ops[3];
        check_case(&pl, &pl.jobs[0], i, ops);
        fpemu_ctx ec;
        fpemu_ctx_init(&ec);
        uint64_t d = faulty_e5m2_mul(&pl.jobs[0], ops, &ec, NULL);
        unsigned rf;
        uint64_t r = ref_op(&rc, pl.jobs[0].fmt, REF_MUL, ops, NULL, &rf);
        int differ = !((d == r || (ref_is_nan(&pl.jobs[0].rfmt, d) && ref_is_nan(&pl.jobs[0].rfmt, r))) && ec.flags == rf);
        really += differ;
        if (differ && (r & 0x7C) == 0 && (r & 0x7F) != 0) sub_found = 1;
        if (differ && d != r && (rf & FPEMU_FLAG_INEXACT) && ((r ^ d) & 0x7F) == 1) tie_found = 1;
    }
    ok(really == bad.mismatches, "the count is exact: %llu independent recount", (unsigned long long)really);
    ok(tie_found && sub_found, "both planted faults show up (ties away, no subnormals)");
    for (size_t k = 0; k < bad.nkept; k++) {
        const check_mismatch *m = &bad.kept[k];
        if (k && bad.kept[k - 1].index >= m->index) listed_ok = 0;
        if (m->dut == m->ref && m->dut_flags == m->ref_flags) listed_ok = 0;
    }
    ok(listed_ok && bad.nkept == bad.mismatches, "every mismatch is listed once, in case order, and differs");
    char line[256];
    check_config cfg0;
    memset(&cfg0, 0, sizeof cfg0);
    check_format_line(line, sizeof line, &pl, &cfg0, &bad.kept[0]);
    int ok_line = !strncmp(line, "e5m2_mul rne: ", 14) && strstr(line, " => emu ") && strstr(line, " ref ");
    ok(ok_line, "line: %s", line);

    /* shards: disjoint, covering, same mismatches */
    uint64_t cases = 0, mism = 0;
    int same_kept = 1;
    size_t pos = 0;
    for (uint64_t s = 0; s < 5; s++) {
        check_result r = run(&pl, faulty_e5m2_mul, 1, s, 5, 1000000);
        cases += r.cases, mism += r.mismatches;
        for (size_t k = 0; k < r.nkept; k++, pos++)
            if (pos >= bad.nkept || r.kept[k].index != bad.kept[pos].index) same_kept = 0;
        if (r.first != 65536 * s / 5 || r.last != 65536 * (s + 1) / 5) same_kept = 0;
        check_result_free(&r);
    }
    ok(cases == 65536 && mism == bad.mismatches && same_kept && pos == bad.nkept,
       "5 shards cover the cases once and find the same mismatches");
    /* threads: the kept (first) mismatches do not depend on the thread count */
    check_result t1 = run(&pl, faulty_e5m2_mul, 1, 0, 1, 7), t4 = run(&pl, faulty_e5m2_mul, 4, 0, 1, 7);
    int same = t1.nkept == 7 && t4.nkept == 7 && t1.mismatches == t4.mismatches;
    for (size_t k = 0; same && k < 7; k++) same = t1.kept[k].index == t4.kept[k].index && t1.kept[k].index == bad.kept[k].index;
    ok(same, "1 and 4 threads keep the same first 7 mismatches");
    check_result_free(&t1), check_result_free(&t4), check_result_free(&bad);
    check_plan_free(&pl);

    /* exhaustive enumeration: every pair once */
    check_spec s2 = {"e2m1", "add", "rne", CHECK_EXHAUSTIVE, 0, 1};
    if (check_plan_build(&pl, &s2, err, sizeof err, NULL, 0)) bail("plan: %s", err);
    unsigned char seen[256] = {0};
    int dup = 0;
    for (uint64_t i = 0; i < pl.total; i++) {
        uint64_t o[3];
        check_case(&pl, &pl.jobs[0], i, o);
        dup |= o[0] > 15 || o[1] > 15 || seen[o[0] * 16 + o[1]]++;
    }
    ok(pl.total == 256 && !dup, "e2m1 pairs: 256, each once");
    check_plan_free(&pl);

    /* structured f16: the grid holds the boundaries */
    check_spec s3 = {"f16", "add", "rne", CHECK_STRUCTURED, 0, 1};
    if (check_plan_build(&pl, &s3, err, sizeof err, NULL, 0)) bail("plan: %s", err);
    const check_job *j = &pl.jobs[0];
    uint64_t want[] = {0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x3C00, 0x3C01, 0x3BFF, 0x7BFF, 0xFBFF, 0x7C00, 0x7E00, 0x7C01};
    int all_in = 1;
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        int in = 0;
        for (size_t q = 0; q < j->nfull; q++) in |= j->full[q] == want[k];
        if (!in) { all_in = 0; diag("f16 core lacks %04llX", (unsigned long long)want[k]); }
    }
    ok(all_in, "f16 core set: zeros, subnormal/normal boundaries, 1 and neighbours, max, inf, qNaN, sNaN");
    ok(j->nset > 1000 && j->count == j->nfull * j->nfull + j->nhash, "f16 add: %zu core pairs + %llu from a %zu-value grid",
       j->nfull * j->nfull, (unsigned long long)j->nhash, j->nset);
    check_plan_free(&pl);

    /* conversions: the grid has the target's midpoints */
    check_spec s4 = {"e4m3", "from_f32", "rne", CHECK_STRUCTURED, 0, 1};
    if (check_plan_build(&pl, &s4, err, sizeof err, NULL, 0)) bail("plan: %s", err);
    j = &pl.jobs[0];
    int has464 = 0, has480 = 0, hasmid = 0;
    for (size_t q = 0; q < j->nfull; q++) {
        has464 |= j->full[q] == 0x43E80000;           /* 464: max + half ulp */
        has480 |= j->full[q] == 0x43E80001;           /* just above */
        hasmid |= j->full[q] == 0x3A800000;           /* 2^-10: half the min subnormal */
    }
    ok(has464 && has480 && hasmid && !strcmp(j->name, "f32_to_e4m3"), "f32_to_e4m3 grid: 464, its neighbour, 2^-10");
    check_plan_free(&pl);

    /* random: a pure function of seed and index */
    check_spec s5 = {"f16,bf16", "fma,to_e4m3", "rne", CHECK_RANDOM, 1000, 42};
    check_plan p2;
    if (check_plan_build(&pl, &s5, err, sizeof err, NULL, 0) || check_plan_build(&p2, &s5, err, sizeof err, NULL, 0)) bail("plan: %s", err);
    s5.seed = 43;
    check_plan p3;
    if (check_plan_build(&p3, &s5, err, sizeof err, NULL, 0)) bail("plan: %s", err);
    int det = 1, differs = 0;
    for (int jj = 0; jj < pl.njobs; jj++)
        for (uint64_t i = 0; i < 1000; i += 7) {
            uint64_t a[3], b[3], c[3];
            check_case(&pl, &pl.jobs[jj], i, a), check_case(&p2, &p2.jobs[jj], 999 - i, b), check_case(&p2, &p2.jobs[jj], i, b);
            check_case(&p3, &p3.jobs[jj], i, c);
            det &= !memcmp(a, b, sizeof a);
            differs |= memcmp(a, c, sizeof a) != 0;
        }
    ok(det && differs && pl.total == 4000, "random cases: same seed same cases (any order), other seed other cases");
    check_plan_free(&pl), check_plan_free(&p2), check_plan_free(&p3);

    /* bad plans */
    check_spec b1 = {"f16", "add", "rnd", CHECK_RANDOM, 10, 1};
    ok(check_plan_build(&pl, &b1, err, sizeof err, NULL, 0) == -1 && strstr(err, "'rnd'"), "unknown mode refused: %s", err);
    check_spec b2 = {"f32", "mul", "rne", CHECK_EXHAUSTIVE, 0, 1};
    ok(check_plan_build(&pl, &b2, err, sizeof err, NULL, 0) == -1 && strstr(err, "2^64"), "exhaustive f32 mul refused: %s", err);
    check_spec b3 = {"f16", "to_nonsense", "rne", CHECK_RANDOM, 10, 1};
    ok(check_plan_build(&pl, &b3, err, sizeof err, NULL, 0) == -1 && strstr(err, "nonsense"), "unknown target refused: %s", err);
    ref_ctx_clear(&rc);
    return done_testing();
}
