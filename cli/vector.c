/* SPDX-License-Identifier: MIT */
/* vector.c: op names, options, line reading and field parsing for the
 * TestFloat-style vector interface (see vector.h). Hot path: one memchr per
 * line, a table-driven hex parse per field, one buffered write per line. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "vector.h"

/* ---- op names -------------------------------------------------------- */

typedef struct { const char *suffix; vec_kind kind; int nargs; } op_suffix;

/* Longest suffixes first, so "f16_eq_signaling" is not read as a format
 * "f16_eq" with op "signaling". */
static const op_suffix op_suffixes[] = {
    {"eq_signaling", VEC_EQ_SIGNALING, 2},
    {"maximumNumber", VEC_MAX_NUM, 2},
    {"minimumNumber", VEC_MIN_NUM, 2},
    {"le_quiet", VEC_LE_QUIET, 2},
    {"lt_quiet", VEC_LT_QUIET, 2},
    {"maximum", VEC_MAX, 2},
    {"minimum", VEC_MIN, 2},
    {"mulAdd", VEC_FMA, 3},
    {"sqrt", VEC_SQRT, 1},
    {"add", VEC_ADD, 2},
    {"sub", VEC_SUB, 2},
    {"mul", VEC_MUL, 2},
    {"div", VEC_DIV, 2},
    {"fma", VEC_FMA, 3},
    {"min", VEC_MIN, 2},
    {"max", VEC_MAX, 2},
    {"eq", VEC_EQ, 2},
    {"le", VEC_LE, 2},
    {"lt", VEC_LT, 2},
};

static const char op_list[] =
    "add, sub, mul, div, sqrt, mulAdd (alias fma), min/max (alias minimum/maximum), "
    "minimumNumber, maximumNumber, eq, le, lt, eq_signaling, le_quiet, lt_quiet";

int vec_op_parse(const char *name, vec_op *op, char *err, size_t errlen) {
    char ferr[256];
    size_t n = strlen(name);
    memset(op, 0, sizeof *op);
    if (n == 0 || n >= sizeof op->name) {
        snprintf(err, errlen, "operation name %s (expected FMT_OP or SRC_to_DST)", n ? "too long" : "empty");
        return -1;
    }
    strcpy(op->name, name);

    /* Conversions: split at "_to_"; try every occurrence. */
    const char *first_err_at = NULL;
    char first_err[800] = "";
    for (const char *t = strstr(name, "_to_"); t; t = strstr(t + 1, "_to_")) {
        char src[160];
        size_t sl = (size_t)(t - name);
        if (sl == 0 || sl >= sizeof src || !t[4]) continue;
        memcpy(src, name, sl);
        src[sl] = 0;
        const fpemu_format *fs = fpemu_format_get(src, ferr, sizeof ferr);
        if (!fs) {
            if (!first_err_at) { first_err_at = t; snprintf(first_err, sizeof first_err, "source format '%s': %s", src, ferr); }
            continue;
        }
        const fpemu_format *fd = fpemu_format_get(t + 4, ferr, sizeof ferr);
        if (!fd) {
            if (!first_err_at) { first_err_at = t; snprintf(first_err, sizeof first_err, "destination format '%s': %s", t + 4, ferr); }
            continue;
        }
        op->kind = VEC_CONVERT;
        op->in = fs;
        op->out = fd;
        op->nargs = 1;
        goto widths;
    }

    for (size_t i = 0; i < sizeof op_suffixes / sizeof op_suffixes[0]; i++) {
        const op_suffix *s = &op_suffixes[i];
        size_t sl = strlen(s->suffix);
        if (n < sl + 2 || name[n - sl - 1] != '_' || strcmp(name + n - sl, s->suffix)) continue;
        char fname[160];
        memcpy(fname, name, n - sl - 1);
        fname[n - sl - 1] = 0;
        const fpemu_format *f = fpemu_format_get(fname, ferr, sizeof ferr);
        if (!f) {
            snprintf(err, errlen, "operation '%s': %s", name, ferr); /* ferr names the format */
            return -1;
        }
        op->kind = s->kind;
        op->in = f;
        op->out = s->kind >= VEC_EQ && s->kind <= VEC_LT_QUIET ? NULL : f;
        op->nargs = s->nargs;
        goto widths;
    }
    if (first_err_at)
        snprintf(err, errlen, "unknown conversion '%s': %s", name, first_err);
    else
        snprintf(err, errlen, "unknown operation '%s' (expected FMT_OP with OP one of %s, "
                 "or SRC_to_DST; formats: see `fpemu formats`)", name, op_list);
    return -1;

widths:
    op->in_digits = fpemu_format_hex_digits(op->in);
    op->in_max = cli_code_max(op->in);
    if (op->out) {
        op->out_digits = fpemu_format_hex_digits(op->out);
        op->out_max = cli_code_max(op->out);
    } else {
        op->out_digits = 1;
        op->out_max = 1;
    }
    return 0;
}

uint64_t vec_eval(const vec_op *op, const uint64_t *a, fpemu_ctx *ctx) {
    const fpemu_format *f = op->in;
    ctx->flags = 0;
    switch (op->kind) {
    case VEC_ADD: return fpemu_add(f, a[0], a[1], ctx);
    case VEC_SUB: return fpemu_sub(f, a[0], a[1], ctx);
    case VEC_MUL: return fpemu_mul(f, a[0], a[1], ctx);
    case VEC_DIV: return fpemu_div(f, a[0], a[1], ctx);
    case VEC_SQRT: return fpemu_sqrt(f, a[0], ctx);
    case VEC_FMA: return fpemu_fma(f, a[0], a[1], a[2], ctx);
    case VEC_MIN: return fpemu_min(f, a[0], a[1], ctx);
    case VEC_MAX: return fpemu_max(f, a[0], a[1], ctx);
    case VEC_MIN_NUM: return fpemu_min_num(f, a[0], a[1], ctx);
    case VEC_MAX_NUM: return fpemu_max_num(f, a[0], a[1], ctx);
    /* TestFloat: eq is quiet, le/lt signal on any NaN; the _signaling and
     * _quiet variants swap that. */
    case VEC_EQ: return fpemu_compare(f, a[0], a[1], 0, ctx) == FPEMU_EQ;
    case VEC_EQ_SIGNALING: return fpemu_compare(f, a[0], a[1], 1, ctx) == FPEMU_EQ;
    case VEC_LE: { fpemu_cmp c = fpemu_compare(f, a[0], a[1], 1, ctx); return c == FPEMU_LT || c == FPEMU_EQ; }
    case VEC_LE_QUIET: { fpemu_cmp c = fpemu_compare(f, a[0], a[1], 0, ctx); return c == FPEMU_LT || c == FPEMU_EQ; }
    case VEC_LT: return fpemu_compare(f, a[0], a[1], 1, ctx) == FPEMU_LT;
    case VEC_LT_QUIET: return fpemu_compare(f, a[0], a[1], 0, ctx) == FPEMU_LT;
    case VEC_CONVERT: return fpemu_convert(op->out, f, a[0], ctx);
    }
    return 0;
}

/* ---- options ----------------------------------------------------------- */

static void usage(FILE *out, int verify) {
    const char *sub = verify ? "verify" : "run";
    fprintf(out,
        "usage: fpemu %s OP [--round MODE] [--sat] [--tininess before|after] [--ftz] [--daz]\n"
        "                 [--seed N [--counter C] | --sr-draws FILE] [--sr-bits R]\n"
        "                 [--nan canonical|x86|cuda|torch]%s\n\n",
        sub, verify ? " [--exact-nan] [--max-print K]" : "");
    if (verify)
        fprintf(out,
            "Reads complete vector lines (operands, result, flags) on standard input,\n"
            "recomputes each, and prints every line whose result or flags differ:\n"
            "  line N: OPERANDS => GOT_RESULT GOT_FLAGS, expected RESULT FLAGS\n"
            "then a summary `N lines, M mismatches`. Any NaN matches any NaN unless\n"
            "--exact-nan. Exit status: 0 all match, 1 mismatches, 2 bad usage or input.\n\n");
    else
        fprintf(out,
            "Reads operand lines on standard input and writes complete lines\n"
            "(operands, result, flags as 2 hex digits) on standard output. A complete\n"
            "line (operands, result, flags) is accepted too: its old result and flags\n"
            "are checked for form and replaced. Exit status: 0, or 2 on bad usage or input.\n\n");
    fprintf(out,
        "OP: FMT_add|sub|mul|div|sqrt|mulAdd|fma, FMT_min|max|minimumNumber|maximumNumber,\n"
        "    FMT_eq|le|lt|eq_signaling|le_quiet|lt_quiet (result 0 or 1), SRC_to_DST.\n"
        "    FMT: any name, alias or custom spec from `fpemu formats` (f16, bf16, e4m3,\n"
        "    float8_e4m3fn, e6m1, binary8p5, custom:e=4,m=3,bias=7,inf=no,nan=fn, ...).\n"
        "Fields: upper-case hex, each format's width (2 digits up to 8 bits, 4, 8, 16);\n"
        "    flags 01 inexact, 02 underflow, 04 overflow, 08 infinite, 10 invalid.\n"
        "    Blank lines and lines starting with '#' are skipped. The first bad line\n"
        "    stops the run with a message naming it (exit 2).\n\n"
        "Options:\n"
        "  --round MODE        rne (default), rna, rtz, rup, rdn, rto, sr; TestFloat's\n"
        "                      -rnear_even -rnear_maxMag -rminMag -rmax -rmin -rodd too\n"
        "  --sat               overflow saturates to max finite (satfinite)\n"
        "  --tininess before|after   (also -tininessbefore, -tininessafter); default after\n"
        "  --ftz, --daz        flush tiny results to zero / read subnormal inputs as zero\n"
        "  --seed N, --sr-bits R     stochastic rounding stream (R random bits, 1..64; 0 = 64);\n"
        "                      vector line i (from 0; blank and comment lines do not count)\n"
        "                      draws fpemu_random64(N, C + i) if its operation takes a draw\n"
        "                      (an exact result finite and nonzero), whatever earlier lines did\n"
        "  --counter C         C above (default 0): --counter C + i replays line i alone\n"
        "  --sr-draws FILE     sr with the caller's random bits: FILE holds one draw per\n"
        "                      line, 1 to 16 hex digits; vector line i's operation, if it\n"
        "                      takes a draw (an exact result finite and nonzero), takes\n"
        "                      line i's (the top R bits decide)\n"
        "  --nan POLICY        NaN results: canonical (default; positive quiet NaN), x86 (SSE's\n"
        "                      first-operand propagation), cuda (NVIDIA GPUs' all-ones NaN),\n"
        "                      torch (PyTorch's casts: fp8 NaNs keep the sign, wider as cuda)\n");
    if (verify)
        fprintf(out,
            "  --exact-nan         NaN results must match bit for bit\n"
            "  --max-print K       print at most K mismatches (default 20)\n");
}

/* Value of "--opt VALUE" or "--opt=VALUE"; advances *i. NULL if missing. */
static const char *opt_value(int argc, char **argv, int *i, const char *opt) {
    size_t n = strlen(opt);
    const char *a = argv[*i];
    if (strncmp(a, opt, n)) return NULL;
    if (a[n] == '=') return a + n + 1;
    if (a[n] == 0 && *i + 1 < argc) return argv[++*i];
    return NULL;
}

static int is_opt(const char *a, const char *opt) {
    size_t n = strlen(opt);
    return !strncmp(a, opt, n) && (a[n] == 0 || a[n] == '=');
}

int vec_parse_args(int argc, char **argv, int verify, vec_cfg *cfg) {
    const char *sub = verify ? "verify" : "run";
    memset(cfg, 0, sizeof *cfg);
    fpemu_ctx_init(&cfg->ctx);
    cfg->max_print = 20;
    int seed_given = 0, counter_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        /* TestFloat spells options with one dash; accept one or two. */
        const char *b = a[0] == '-' ? (a[1] == '-' ? a + 2 : a + 1) : NULL;
        if (cli_is_help(a)) { usage(stdout, verify); return -1; }
        if (!b) {
            if (cfg->opname) return cli_error(sub, "more than one operation given ('%s' and '%s'); see `fpemu %s --help`", cfg->opname, a, sub);
            cfg->opname = a;
            continue;
        }
        if (is_opt(b, "round")) {
            if (!(v = opt_value(argc, argv, &i, a[1] == '-' ? "--round" : "-round")))
                return cli_error(sub, "%s needs a mode (rne, rna, rtz, rup, rdn, rto, sr)", a);
            int r = fpemu_round_parse(v);
            if (r < 0) return cli_error(sub, "unknown rounding mode '%s' (expected rne, rna, rtz, rup, rdn, rto, sr, or a TestFloat name: near_even, near_maxMag, minMag, max, min, odd)", v);
            cfg->ctx.round = (fpemu_round)r;
        } else if (!strcmp(b, "sat") || !strcmp(b, "satfinite")) {
            cfg->ctx.sat = 1;
        } else if (!strcmp(b, "ftz")) {
            cfg->ctx.ftz = 1;
        } else if (!strcmp(b, "daz")) {
            cfg->ctx.daz = 1;
        } else if (!strcmp(b, "tininessbefore")) {
            cfg->ctx.tininess_before = 1;
        } else if (!strcmp(b, "tininessafter")) {
            cfg->ctx.tininess_before = 0;
        } else if (is_opt(b, "tininess")) {
            if (!(v = opt_value(argc, argv, &i, a[1] == '-' ? "--tininess" : "-tininess")))
                return cli_error(sub, "%s needs 'before' or 'after'", a);
            if (!strcmp(v, "before")) cfg->ctx.tininess_before = 1;
            else if (!strcmp(v, "after")) cfg->ctx.tininess_before = 0;
            else return cli_error(sub, "unknown tininess '%s' (expected before or after)", v);
        } else if (is_opt(b, "seed") || is_opt(b, "counter")) { /* the sr stream: seed, first counter */
            unsigned long long s;
            int seed = is_opt(b, "seed"), two = a[1] == '-';
            const char *name = seed ? (two ? "--seed" : "-seed") : (two ? "--counter" : "-counter");
            if (!(v = opt_value(argc, argv, &i, name)) || cli_parse_u64(v, &s))
                return cli_error(sub, "%s needs a non-negative integer %s", a, seed ? "seed" : "counter");
            if (seed) cfg->ctx.seed = s, seed_given = 1;
            else cfg->ctx.counter = cfg->first_counter = s, counter_given = 1;
        } else if (is_opt(b, "sr-draws")) {
            if (!(v = opt_value(argc, argv, &i, a[1] == '-' ? "--sr-draws" : "-sr-draws")) || !*v)
                return cli_error(sub, "%s needs a file of draws, one 64-bit hex value per line", a);
            cfg->draws_path = v;
        } else if (is_opt(b, "sr-bits")) {
            unsigned long long s;
            if (!(v = opt_value(argc, argv, &i, a[1] == '-' ? "--sr-bits" : "-sr-bits")) || cli_parse_u64(v, &s) || s > 64)
                return cli_error(sub, "%s needs a number of random bits, 1..64 (0 = 64)", a);
            cfg->ctx.sr_bits = (int)s;
        } else if (is_opt(b, "nan")) {
            if (!(v = opt_value(argc, argv, &i, a[1] == '-' ? "--nan" : "-nan")))
                return cli_error(sub, "%s needs a NaN policy (canonical, x86 or cuda)", a);
            int p = fpemu_nan_policy_parse(v);
            if (p < 0) return cli_error(sub, "unknown NaN policy '%s' (expected canonical, x86 or cuda)", v);
            cfg->ctx.nan_policy = (fpemu_nan_policy)p;
        } else if (verify && !strcmp(b, "exact-nan")) {
            cfg->exact_nan = 1;
        } else if (verify && is_opt(b, "max-print")) {
            unsigned long long k;
            if (!(v = opt_value(argc, argv, &i, a[1] == '-' ? "--max-print" : "-max-print")) || cli_parse_u64(v, &k) || k > 1000000000ULL)
                return cli_error(sub, "%s needs a count of mismatches to print", a);
            cfg->max_print = (long)k;
        } else if (b[0] == 'r' && fpemu_round_parse(a[1] == '-' ? a + 1 : a) >= 0) {
            /* -rnear_even, --rminMag, ... */
            cfg->ctx.round = (fpemu_round)fpemu_round_parse(a[1] == '-' ? a + 1 : a);
        } else {
            return cli_error(sub, "unknown option '%s'; see `fpemu %s --help`", a, sub);
        }
    }
    if (cfg->draws_path && cfg->ctx.round != FPEMU_SR)
        return cli_error(sub, "--sr-draws %s: the draws are for stochastic rounding; add --round sr", cfg->draws_path);
    if (cfg->draws_path && (seed_given || counter_given))
        return cli_error(sub, "--%s and --sr-draws both given: the draws come from one or the other",
                         seed_given ? "seed" : "counter");
    if (!cfg->opname) {
        usage(stderr, verify);
        return cli_error(sub, "missing operation (e.g. f16_add, e4m3_mul, f32_to_e4m3)");
    }
    return 0;
}

/* ---- line reading ------------------------------------------------------ */

#define READ_CHUNK (1 << 18)

int vec_reader_init(vec_reader *r, FILE *in) {
    memset(r, 0, sizeof *r);
    r->in = in;
    r->cap = READ_CHUNK + VEC_MAX_LINE + 2;
    r->buf = malloc(r->cap);
    return r->buf ? 0 : -1;
}

void vec_reader_free(vec_reader *r) { free(r->buf); r->buf = NULL; }

int vec_read_line(vec_reader *r, const char **line, size_t *len) {
    for (;;) {
        char *s = r->buf + r->start;
        size_t avail = r->end - r->start;
        char *nl = avail ? memchr(s, '\n', avail) : NULL;
        if (nl || (r->eof && avail)) {
            size_t l = nl ? (size_t)(nl - s) : avail;
            r->lineno++;
            r->start += nl ? l + 1 : l;
            if (l > 0 && s[l - 1] == '\r') l--;
            if (l > VEC_MAX_LINE) return -1;
            *line = s;
            *len = l;
            return 1;
        }
        if (r->eof) return 0;
        if (avail > VEC_MAX_LINE + 1) {
            /* No newline within the limit: report the line as too long. */
            r->lineno++;
            return -1;
        }
        memmove(r->buf, s, avail);
        r->start = 0;
        r->end = avail;
        size_t got = fread(r->buf + r->end, 1, r->cap - r->end, r->in);
        r->end += got;
        if (got == 0) {
            if (ferror(r->in)) return -2;
            r->eof = 1;
        }
    }
}

/* hex digit values (-1: not one), shared by the field parser and --sr-draws */
static signed char hexval[256];
static int hexval_ready;

static void hexval_init(void) {
    memset(hexval, -1, sizeof hexval);
    for (int c = 0; c < 10; c++) hexval['0' + c] = (signed char)c;
    for (int c = 0; c < 6; c++) hexval['A' + c] = hexval['a' + c] = (signed char)(10 + c);
    hexval_ready = 1;
}

/* ---- --sr-draws ------------------------------------------------------------ */

int vec_draws_open(vec_draws *d, const char *path, char *err, size_t errlen) {
    memset(d, 0, sizeof *d);
    d->path = path;
    if (!(d->f = fopen(path, "rb"))) {
        snprintf(err, errlen, "--sr-draws %s: %s", path, strerror(errno));
        return -1;
    }
    if (vec_reader_init(&d->rd, d->f)) {
        fclose(d->f);
        d->f = NULL;
        snprintf(err, errlen, "--sr-draws %s: out of memory", path);
        return -1;
    }
    return 0;
}

int vec_draws_next(vec_draws *d, fpemu_ctx *ctx, char *err, size_t errlen) {
    const char *line;
    size_t len;
    for (;;) {
        int r = vec_read_line(&d->rd, &line, &len);
        if (r == 0) {
            snprintf(err, errlen, "--sr-draws %s: the file ends after line %ld, with fewer draws than vector lines", d->path,
                     d->rd.lineno);
            return -1;
        }
        if (r < 0) {
            snprintf(err, errlen, "--sr-draws %s: line %ld: %s", d->path, d->rd.lineno,
                     r == -1 ? "too long (expected one draw, 1 to 16 hex digits)" : "read error");
            return -1;
        }
        size_t i = 0;
        while (i < len && (line[i] == ' ' || line[i] == '\t')) i++;
        if (i == len || line[i] == '#') continue;
        if (!hexval_ready) hexval_init();
        size_t j = i;
        uint64_t v = 0;
        while (j < len && hexval[(unsigned char)line[j]] >= 0 && j - i < 17) v = v << 4 | (uint64_t)hexval[(unsigned char)line[j++]];
        size_t k = j;
        while (k < len && (line[k] == ' ' || line[k] == '\t')) k++;
        if (j == i || j - i > 16 || k != len) {
            snprintf(err, errlen, "--sr-draws %s: line %ld: expected one draw, 1 to 16 hex digits, got '%.*s'", d->path,
                     d->rd.lineno, (int)(len < 60 ? len : 60), line);
            return -1;
        }
        d->draw = v;
        ctx->sr_stream = &d->draw;
        ctx->sr_len = 1;
        ctx->sr_pos = 0;
        return 0;
    }
}

void vec_draws_close(vec_draws *d) {
    if (d->f) {
        vec_reader_free(&d->rd);
        fclose(d->f);
        d->f = NULL;
    }
}

/* ---- fields -------------------------------------------------------------- */

static const char *field_name(const vec_op *op, int k, char *buf, size_t n) {
    if (k < op->nargs) snprintf(buf, n, "operand %d", k + 1);
    else if (k == op->nargs) snprintf(buf, n, "result");
    else snprintf(buf, n, "flags");
    return buf;
}

static void describe_expected(const vec_op *op, int want_min, int want_max, char *buf, size_t n) {
    char fmtd[96];
    if (op->out) snprintf(fmtd, sizeof fmtd, "%d hex digits", op->out_digits);
    else snprintf(fmtd, sizeof fmtd, "0 or 1");
    if (want_min == want_max && want_min == op->nargs)
        snprintf(buf, n, "%d operand%s of %d hex digits", op->nargs, op->nargs > 1 ? "s" : "", op->in_digits);
    else if (want_min == want_max)
        snprintf(buf, n, "%d operand%s of %d hex digits, the result (%s) and the flags (2 hex digits)",
                 op->nargs, op->nargs > 1 ? "s" : "", op->in_digits, fmtd);
    else
        snprintf(buf, n, "%d operand%s of %d hex digits, optionally followed by a result (%s) and flags (2 hex digits)",
                 op->nargs, op->nargs > 1 ? "s" : "", op->in_digits, fmtd);
}

int vec_parse_line(const vec_op *op, const char *line, size_t len, int want_min, int want_max,
                   uint64_t *v, int *nfields, char *err, size_t errlen) {
    if (!hexval_ready) hexval_init();
    const unsigned char *p = (const unsigned char *)line, *e = p + len;
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    if (p == e || *p == '#') return 1;
    int k = 0;
    char fname[32], want[256];
    while (p < e) {
        const unsigned char *t = p;
        uint64_t x = 0;
        int digits = 0, bad = 0;
        while (p < e && *p != ' ' && *p != '\t') {
            int h = hexval[*p];
            if (h < 0) bad = 1;
            x = (x << 4) | (uint64_t)(h & 15);
            digits++;
            p++;
        }
        if (k >= want_max) {
            describe_expected(op, want_min, want_max, want, sizeof want);
            snprintf(err, errlen, "too many fields (expected %s for %s)", want, op->name);
            return -1;
        }
        int width = k < op->nargs ? op->in_digits : k == op->nargs ? op->out_digits : 2;
        uint64_t max = k < op->nargs ? op->in_max : k == op->nargs ? op->out_max : 0x1F;
        if (bad || digits != width || x > max) field_name(op, k, fname, sizeof fname);
        if (bad) {
            /* Name the first offending byte; show it escaped if unprintable. */
            const unsigned char *q = t;
            while (hexval[*q] >= 0) q++;
            if (*q >= 0x21 && *q < 0x7F)
                snprintf(err, errlen, "%s: '%c' at column %d is not a hex digit (expected %d hex digits)",
                         fname, *q, (int)((const char *)q - line) + 1, width);
            else
                snprintf(err, errlen, "%s: byte 0x%02X at column %d is not a hex digit (expected %d hex digits)",
                         fname, *q, (int)((const char *)q - line) + 1, width);
            return -1;
        }
        if (digits != width) {
            snprintf(err, errlen, "%s '%.*s' has %d hex digit%s, expected %d", fname, digits > 40 ? 40 : digits,
                     (const char *)t, digits, digits == 1 ? "" : "s", width);
            return -1;
        }
        if (x > max) {
            if (k == op->nargs + 1)
                snprintf(err, errlen, "flags '%.*s' out of range (expected 00..1F)", digits, (const char *)t);
            else if (k == op->nargs && !op->out)
                snprintf(err, errlen, "result '%.*s' out of range (expected 0 or 1)", digits, (const char *)t);
            else {
                const fpemu_format *f = k < op->nargs ? op->in : op->out;
                char mx[24];
                vec_put_hex(mx, max, width > 16 ? 16 : width)[0] = 0;
                snprintf(err, errlen, "%s '%.*s' out of range for %s (%d-bit codes, at most %s)", fname,
                         digits, (const char *)t, f->name, f->bits + f->pad, mx);
            }
            return -1;
        }
        v[k++] = x;
        while (p < e && (*p == ' ' || *p == '\t')) p++;
    }
    if (k < want_min || (k > want_min && k < want_max)) {
        describe_expected(op, want_min, want_max, want, sizeof want);
        snprintf(err, errlen, "%d field%s, expected %s for %s", k, k == 1 ? "" : "s", want, op->name);
        return -1;
    }
    *nfields = k;
    return 0;
}

char *vec_put_hex(char *p, uint64_t v, int digits) {
    static const char hx[] = "0123456789ABCDEF";
    static char pairs[512];
    if (!pairs[0])
        for (int i = 0; i < 256; i++) pairs[2 * i] = hx[i >> 4], pairs[2 * i + 1] = hx[i & 15];
    int i = digits;
    for (; i >= 2; i -= 2, v >>= 8) memcpy(p + i - 2, pairs + 2 * (v & 0xFF), 2);
    if (i) p[0] = hx[v & 15];
    return p + digits;
}
