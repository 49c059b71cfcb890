/* SPDX-License-Identifier: MIT */
/* cmd_formats.c: `fpemu formats`, the format catalogue (a table of every
 * registry format, or one format's details with example encodings), in
 * text, Markdown, HTML or CSV; and `--error-curve FMT`, the relative
 * rounding error of FMT over its range (data for the report's plots). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

enum { OUT_TEXT, OUT_MD, OUT_HTML, OUT_CSV };

/* Layout of a code word, from the descriptor's primary fields. */
typedef struct layout {
    uint64_t sign, expmask, mantmask, magmask, one; /* one = value of the lowest code bit */
    int digits;
} layout;

static layout layout_of(const fpemu_format *f) {
    layout L;
    int pad = f->pad, m = f->mbits, e = f->ebits;
    L.one = (uint64_t)1 << pad;
    L.mantmask = m ? ((((uint64_t)1 << m) - 1) << pad) : 0;
    L.expmask = ((((uint64_t)1 << e) - 1) << (m + pad));
    L.magmask = L.expmask | L.mantmask;
    L.sign = f->is_signed ? ((uint64_t)1 << (e + m + pad)) : 0;
    L.digits = fpemu_format_hex_digits(f);
    return L;
}

static const char *hexs(char *buf, uint64_t v, int digits) {
    snprintf(buf, 24, "%0*llX", digits, (unsigned long long)v);
    return buf;
}

/* "2^-14" for powers of two, else %.7g. */
static const char *num(char *buf, size_t n, double x) {
    int e;
    if (x > 0 && isfinite(x) && frexp(x, &e) == 0.5) snprintf(buf, n, "2^%d", e - 1);
    else snprintf(buf, n, "%.7g", x);
    return buf;
}

static void inf_codes(const fpemu_format *f, char *buf, size_t n) {
    layout L = layout_of(f);
    char a[24], b[24];
    switch (f->inf) {
    case FPEMU_INF_NONE: snprintf(buf, n, "none"); return;
    case FPEMU_INF_IEEE:
        if (L.sign) snprintf(buf, n, "%s %s", hexs(a, L.expmask, L.digits), hexs(b, L.sign | L.expmask, L.digits));
        else snprintf(buf, n, "%s", hexs(a, L.expmask, L.digits));
        return;
    case FPEMU_INF_TOP:
        if (L.sign) snprintf(buf, n, "%s %s", hexs(a, L.magmask, L.digits), hexs(b, L.sign | L.magmask, L.digits));
        else snprintf(buf, n, "%s", hexs(a, L.magmask, L.digits));
        return;
    }
    snprintf(buf, n, "?");
}

static void nan_codes(const fpemu_format *f, char *buf, size_t n) {
    layout L = layout_of(f);
    char a[24], b[24], c[24], d[24];
    switch (f->nan) {
    case FPEMU_NANS_NONE: snprintf(buf, n, "none"); return;
    case FPEMU_NANS_IEEE:
        if (L.mantmask == L.one) { /* one mantissa bit: a single NaN per sign */
            if (L.sign) snprintf(buf, n, "%s %s", hexs(a, L.magmask, L.digits), hexs(b, L.sign | L.magmask, L.digits));
            else snprintf(buf, n, "%s", hexs(a, L.magmask, L.digits));
            return;
        }
        if (L.sign)
            snprintf(buf, n, "%s-%s %s-%s", hexs(a, L.expmask | L.one, L.digits), hexs(b, L.magmask, L.digits),
                     hexs(c, L.sign | L.expmask | L.one, L.digits), hexs(d, L.sign | L.magmask, L.digits));
        else
            snprintf(buf, n, "%s-%s", hexs(a, L.expmask | L.one, L.digits), hexs(b, L.magmask, L.digits));
        return;
    case FPEMU_NANS_FN:
        if (L.sign) snprintf(buf, n, "%s %s", hexs(a, L.magmask, L.digits), hexs(b, L.sign | L.magmask, L.digits));
        else snprintf(buf, n, "%s", hexs(a, L.magmask, L.digits));
        return;
    case FPEMU_NANS_UZ: snprintf(buf, n, "%s", hexs(a, L.sign, L.digits)); return;
    case FPEMU_NANS_ALLONES: snprintf(buf, n, "%s", hexs(a, L.magmask | L.sign, L.digits)); return;
    }
    snprintf(buf, n, "?");
}

/* Aliases of a registry format, or "" for a custom one. */
static const char *aliases_of(const fpemu_format *f) {
    for (int i = 0; i < fpemu_format_count(); i++)
        if (fpemu_format_at(i) == f) {
            const char *a = fpemu_format_aliases(i);
            return a ? a : "";
        }
    return NULL;
}

/* The table's columns for one format. */
enum { C_NAME, C_BITS, C_E, C_M, C_BIAS, C_MAX, C_MINN, C_MINS, C_INF, C_NAN, C_NEGZ, C_ALIAS, NCOL };
static const char *col_title[NCOL] = {"name", "bits", "e", "m", "bias", "max finite", "min normal",
                                      "min subnormal", "inf", "NaN encodings", "-0", "aliases"};

static void row_of(const fpemu_format *f, char cell[NCOL][160]) {
    snprintf(cell[C_NAME], 160, "%s", f->name);
    snprintf(cell[C_BITS], 160, "%d", f->bits);
    snprintf(cell[C_E], 160, "%d", f->ebits);
    snprintf(cell[C_M], 160, "%d", f->mbits);
    snprintf(cell[C_BIAS], 160, "%d", f->bias);
    num(cell[C_MAX], 160, f->max_finite);
    num(cell[C_MINN], 160, f->min_normal);
    if (f->has_subnormals) num(cell[C_MINS], 160, f->min_subnormal);
    else snprintf(cell[C_MINS], 160, "none");
    inf_codes(f, cell[C_INF], 160);
    nan_codes(f, cell[C_NAN], 160);
    snprintf(cell[C_NEGZ], 160, "%s", !f->is_signed ? "unsigned" : f->has_negzero ? "yes" : "no");
    const char *al = aliases_of(f);
    snprintf(cell[C_ALIAS], 160, "%s", al ? al : "(custom)");
}

static void csv_field(FILE *out, const char *s) {
    if (strpbrk(s, ",\"\n")) {
        fputc('"', out);
        for (; *s; s++) { if (*s == '"') fputc('"', out); fputc(*s, out); }
        fputc('"', out);
    } else {
        fputs(s, out);
    }
}

static void print_csv(FILE *out, const fpemu_format **fs, int n) {
    fputs("name,bits,container,hex_digits,e,m,bias,p,max_finite,min_normal,min_subnormal,"
          "inf_codes,nan_codes,negzero,signed,aliases\n", out);
    for (int i = 0; i < n; i++) {
        const fpemu_format *f = fs[i];
        char infc[160], nanc[160];
        inf_codes(f, infc, sizeof infc);
        nan_codes(f, nanc, sizeof nanc);
        const char *al = aliases_of(f);
        csv_field(out, f->name);
        fprintf(out, ",%d,%d,%d,%d,%d,%d,%d,%.17g,%.17g,", f->bits, f->container, fpemu_format_hex_digits(f),
                f->ebits, f->mbits, f->bias, f->p, f->max_finite, f->min_normal);
        if (f->has_subnormals) fprintf(out, "%.17g", f->min_subnormal);
        fprintf(out, ",%s,%s,%d,%d,", infc, nanc, f->has_negzero, f->is_signed);
        csv_field(out, al ? al : "");
        fputc('\n', out);
    }
}

static void print_table(FILE *out, const fpemu_format **fs, int n, int style) {
    char (*cells)[NCOL][160] = calloc((size_t)n, sizeof *cells);
    if (!cells) return;
    int w[NCOL];
    for (int c = 0; c < NCOL; c++) w[c] = (int)strlen(col_title[c]);
    for (int i = 0; i < n; i++) {
        row_of(fs[i], cells[i]);
        if (style != OUT_TEXT) { /* ", " lets a document wrap the alias list */
            char tmp[160], *q = tmp;
            for (const char *c = cells[i][C_ALIAS]; *c && q < tmp + sizeof tmp - 2; c++) {
                *q++ = *c;
                if (*c == ',') *q++ = ' ';
            }
            *q = 0;
            memcpy(cells[i][C_ALIAS], tmp, sizeof tmp);
        }
        for (int c = 0; c < NCOL; c++)
            if ((int)strlen(cells[i][c]) > w[c]) w[c] = (int)strlen(cells[i][c]);
    }
    if (style == OUT_HTML) {
        fputs("<table class=\"catalogue\">\n<thead><tr>", out);
        for (int c = 0; c < NCOL; c++) { fputs("<th>", out); cli_html_esc(out, col_title[c]); fputs("</th>", out); }
        fputs("</tr></thead>\n<tbody>\n", out);
        for (int i = 0; i < n; i++) {
            fputs("<tr>", out);
            for (int c = 0; c < NCOL; c++) {
                fputs(c == C_NAME ? "<td><code>" : "<td>", out);
                cli_html_esc(out, cells[i][c]);
                fputs(c == C_NAME ? "</code></td>" : "</td>", out);
            }
            fputs("</tr>\n", out);
        }
        fputs("</tbody>\n</table>\n", out);
    } else if (style == OUT_MD) {
        fputs("|", out);
        for (int c = 0; c < NCOL; c++) fprintf(out, " %s |", col_title[c]);
        fputs("\n|", out);
        for (int c = 0; c < NCOL; c++) fputs(" --- |", out);
        fputc('\n', out);
        for (int i = 0; i < n; i++) {
            fputs("|", out);
            for (int c = 0; c < NCOL; c++)
                fprintf(out, c == C_NAME ? " `%s` |" : " %s |", cells[i][c]);
            fputc('\n', out);
        }
    } else {
        for (int c = 0; c < NCOL; c++) fprintf(out, "%-*s%s", c + 1 < NCOL ? w[c] : 0, col_title[c], c + 1 < NCOL ? "  " : "\n");
        for (int i = 0; i < n; i++)
            for (int c = 0; c < NCOL; c++) fprintf(out, "%-*s%s", c + 1 < NCOL ? w[c] : 0, cells[i][c], c + 1 < NCOL ? "  " : "\n");
        fputs("\nHex codes are the format's code word (fpemu_format_hex_digits). "
              "`fpemu formats NAME` shows one format's details.\n", out);
    }
    free(cells);
}

/* One example encoding line: label, code, decoded value. */
static void example(FILE *out, const fpemu_format *f, const char *label, uint64_t code) {
    char h[24], v[64];
    double x = fpemu_to_double(f, code);
    if (isnan(x)) snprintf(v, sizeof v, "NaN");
    else if (isinf(x)) snprintf(v, sizeof v, "%sinf", x < 0 ? "-" : "+");
    else if (x != 0 && fabs(x) < 1e-3) snprintf(v, sizeof v, "%.17g (%s2^%d)", x, x < 0 ? "-" : "", ilogb(x));
    else snprintf(v, sizeof v, "%.17g", x);
    fprintf(out, "    %-16s %s   = %s\n", label, hexs(h, code, fpemu_format_hex_digits(f)), v);
}

/* "2^-14 = 6.103515625e-05", or the exact decimal alone. */
static void detail_value(FILE *out, const char *label, double x) {
    char a[64], b[64];
    num(a, sizeof a, x);
    snprintf(b, sizeof b, "%.17g", x);
    if (strcmp(a, b) && a[0] == '2') fprintf(out, "  %-14s %s = %s\n", label, a, b);
    else fprintf(out, "  %-14s %s\n", label, b);
}

static void print_details(FILE *out, const fpemu_format *f) {
    layout L = layout_of(f);
    char b[64], infc[160], nanc[160];
    const char *al = aliases_of(f);
    fprintf(out, "%s", f->name);
    if (al && *al) fprintf(out, " (aliases: %s)", al);
    if (!al) fprintf(out, " (custom format)");
    fputc('\n', out);
    fprintf(out, "  bits           %d (code word %d bits, %d hex digits", f->bits, f->container, L.digits);
    if (f->pad) fprintf(out, "; low %d bits always zero", f->pad);
    fprintf(out, ")\n");
    fprintf(out, "  fields         %ssign, e=%d exponent bits, m=%d mantissa bits, bias %d, precision p=%d\n",
            f->is_signed ? "" : "no ", f->ebits, f->mbits, f->bias, f->p);
    detail_value(out, "max finite", f->max_finite);
    detail_value(out, "min normal", f->min_normal);
    if (f->has_subnormals)
        detail_value(out, "min subnormal", f->min_subnormal);
    else
        fprintf(out, "  min subnormal  none (no subnormals)\n");
    inf_codes(f, infc, sizeof infc);
    nan_codes(f, nanc, sizeof nanc);
    fprintf(out, "  infinities     %s\n", infc);
    fprintf(out, "  NaN encodings  %s\n", nanc);
    fprintf(out, "  negative zero  %s\n", !f->is_signed ? "no (unsigned)" : f->has_negzero ? "yes" : "no");
    if (f->inf == FPEMU_INF_NONE)
        fprintf(out, "  overflow       %s\n", f->nan == FPEMU_NANS_NONE ? "always saturates to max finite"
                                                                       : "gives NaN, or max finite with --sat");
    fprintf(out, "  examples (round to nearest even):\n");
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    example(out, f, "1.0", fpemu_from_double(f, 1.0, &ctx));
    if (f->is_signed) example(out, f, "-1.0", fpemu_from_double(f, -1.0, &ctx));
    /* Encode max finite rather than trusting max_code's units (tf32 pads). */
    example(out, f, "max finite", fpemu_from_double(f, f->max_finite, &ctx));
    if (f->is_signed) example(out, f, "-max finite", fpemu_from_double(f, -f->max_finite, &ctx));
    example(out, f, "min normal", fpemu_from_double(f, f->min_normal, &ctx));
    if (f->has_subnormals) example(out, f, "min subnormal", fpemu_from_double(f, f->min_subnormal, &ctx));
    if (f->has_subnormals || f->is_signed) example(out, f, "+0", 0);
    if (f->has_negzero) example(out, f, "-0", L.sign);
    if (f->inf != FPEMU_INF_NONE) {
        example(out, f, "+inf", fpemu_from_double(f, INFINITY, &ctx));
        if (f->is_signed) example(out, f, "-inf", fpemu_from_double(f, -INFINITY, &ctx));
    }
    ctx.flags = 0;
    uint64_t qn = fpemu_from_double(f, NAN, &ctx);
    if (fpemu_is_nan(f, qn)) example(out, f, "canonical NaN", qn);
    else fprintf(out, "    %-16s none: a NaN input gives %s with the invalid flag\n", "canonical NaN",
                 hexs(b, qn, L.digits));
}

/* --error-curve: x, |round(x)-x|/|x| (rne, not saturating; NaN where the
 * result is inf/NaN or the error is 0), an overflow marker (1 where the
 * non-saturating result is inf/NaN, else NaN) and the saturating error,
 * for x log-spaced from min_subnormal/8 (min_normal/8 without subnormals)
 * to 8 * max_finite. */
static int error_curve(FILE *out, const fpemu_format *f, long points) {
    if (f->bits >= 64) return cli_error("formats", "--error-curve: %s values are doubles already (error is 0); pick a narrower format", f->name);
    double lo = (f->has_subnormals ? f->min_subnormal : f->min_normal) / 8, hi = f->max_finite * 8;
    double llo = log2(lo), lhi = log2(hi);
    fpemu_ctx ns, sat;
    fpemu_ctx_init(&ns);
    fpemu_ctx_init(&sat);
    sat.sat = 1;
    fprintf(out, "# format %s p %d min_subnormal %.17g min_normal %.17g max_finite %.17g unit_roundoff %.17g\n",
            f->name, f->p, f->has_subnormals ? f->min_subnormal : 0.0, f->min_normal, f->max_finite, ldexp(1, -f->p));
    fprintf(out, "# x relerr_rne overflow_marker relerr_rne_sat\n");
    for (long i = 0; i < points; i++) {
        /* An irrational step offset keeps samples off representable values. */
        double t = (i + 0.5 * (sqrt(5.0) - 1)) / points;
        double x = exp2(llo + (lhi - llo) * t);
        uint64_t q = fpemu_from_double(f, x, &ns);
        uint64_t qs = fpemu_from_double(f, x, &sat);
        double y = fpemu_to_double(f, q), ys = fpemu_to_double(f, qs);
        double e = fabs(y - x) / x, es = fabs(ys - x) / x;
        int ovf = !isfinite(y);
        fprintf(out, "%.9g ", x);
        if (ovf || e == 0) fputs("NaN ", out); else fprintf(out, "%.9g ", e);
        fputs(ovf ? "1 " : "NaN ", out);
        if (!isfinite(ys) || es == 0) fputs("NaN\n", out); else fprintf(out, "%.9g\n", es);
    }
    return 0;
}

static void usage(FILE *out) {
    fputs("usage: fpemu formats [--md|--html|--csv] [NAME...]\n"
          "       fpemu formats --error-curve NAME [--points N]\n\n"
          "Without NAME: a table of every registry format (name, bits, e, m, bias, max finite,\n"
          "min normal, min subnormal, inf encodings, NaN encodings, -0, aliases).\n"
          "With NAME (a name, an alias, or a custom spec such as e6m1, binary8p5 or\n"
          "custom:e=4,m=3,bias=7,inf=no,nan=fn): that format's details with example\n"
          "encodings (1.0, max finite, min normal, min subnormal, zeros, inf, canonical NaN).\n"
          "  --md, --html   the table as Markdown / an HTML <table>\n"
          "  --csv          machine-readable rows (exact values, %.17g)\n"
          "  --error-curve  columns: x, relative error |round(x)-x|/|x| under rne (NaN where\n"
          "                 the result overflows to inf/NaN or is exact), an overflow marker,\n"
          "                 the same error with saturation; x log-spaced over the whole range\n"
          "                 and a factor 8 beyond both ends (--points, default 4000)\n"
          "Exit status: 0, or 2 for an unknown format or option.\n", out);
}

static int unknown_format(const char *name, const char *err) {
    (void)name; /* the library's message names it */
    fprintf(stderr, "fpemu formats: %s\nvalid names:", err);
    for (int i = 0; i < fpemu_format_count(); i++) {
        const char *al = fpemu_format_aliases(i);
        fprintf(stderr, " %s", fpemu_format_at(i)->name);
        if (al && *al) fprintf(stderr, " (%s)", al);
        fputc(i + 1 < fpemu_format_count() ? ',' : '\n', stderr);
    }
    fprintf(stderr, "and custom specs: eXmY, eXmYfn, eXmYfnuz, binary8pP[e|f], custom:e=E,m=M[,bias=B][,inf=ieee|top|no][,nan=ieee|fn|uz|allones|none][,negzero=|signed=|subnormals=yes|no]\n");
    return 2;
}

int cmd_formats(int argc, char **argv) {
    int style = OUT_TEXT;
    const char *curve = NULL;
    long points = 4000;
    const char **names = calloc((size_t)argc + 1, sizeof *names);
    int nn = 0, rc = 0;
    if (!names) return cli_error("formats", "out of memory");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) { usage(stdout); free(names); return 0; }
        else if (!strcmp(a, "--md") || !strcmp(a, "--markdown")) style = OUT_MD;
        else if (!strcmp(a, "--html")) style = OUT_HTML;
        else if (!strcmp(a, "--csv")) style = OUT_CSV;
        else if (!strcmp(a, "--text")) style = OUT_TEXT;
        else if (!strcmp(a, "--error-curve")) {
            if (i + 1 >= argc) { free(names); return cli_error("formats", "--error-curve needs a format name"); }
            curve = argv[++i];
        } else if (!strcmp(a, "--points")) {
            unsigned long long p;
            if (i + 1 >= argc || cli_parse_u64(argv[i + 1], &p) || p < 2 || p > 10000000) {
                free(names);
                return cli_error("formats", "--points needs a count 2..10000000");
            }
            points = (long)p;
            i++;
        } else if (a[0] == '-' && a[1]) {
            free(names);
            return cli_error("formats", "unknown option '%s' (expected --md, --html, --csv, --error-curve NAME, --points N; see --help)", a);
        } else names[nn++] = a;
    }
    char err[400];
    if (curve) {
        const fpemu_format *f = fpemu_format_get(curve, err, sizeof err);
        rc = f ? error_curve(stdout, f, points) : unknown_format(curve, err);
        free(names);
        if (!rc && fflush(stdout)) rc = cli_error("formats", "error writing standard output");
        return rc;
    }
    int n = nn ? nn : fpemu_format_count();
    const fpemu_format **fs = calloc((size_t)n + 1, sizeof *fs);
    if (!fs) { free(names); return cli_error("formats", "out of memory"); }
    for (int i = 0; i < n; i++) {
        fs[i] = nn ? fpemu_format_get(names[i], err, sizeof err) : fpemu_format_at(i);
        if (!fs[i]) { rc = unknown_format(names[i], err); goto out; }
    }
    if (style == OUT_CSV) print_csv(stdout, fs, n);
    else if (nn && style == OUT_TEXT)
        for (int i = 0; i < n; i++) { if (i) putchar('\n'); print_details(stdout, fs[i]); }
    else print_table(stdout, fs, n, style);
    if (fflush(stdout)) rc = cli_error("formats", "error writing standard output");
out:
    free(fs);
    free(names);
    return rc;
}
