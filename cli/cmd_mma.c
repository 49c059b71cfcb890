/* SPDX-License-Identifier: MIT */
/* cmd_mma.c: `fpemu mma` (one tensor-core dot product per line) and
 * `fpemu probe` (infer a model's parameters through the black-box probe).
 *
 *   fpemu mma --model M --a FMT --b FMT [--c FMT] [--d FMT] [--promote N]
 *             [--set KEY=VALUE]... [--sat] [--describe]
 * reads lines `C A0 B0 A1 B1 ... A(k-1) B(k-1)` (hex codes, any k) and
 * writes each line with D appended (the vector interface, docs/cli.md). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "mma.h"
#include "mma_genver.h"
#include "probe_offline.h"

typedef struct {
    const char *model, *a, *b, *c, *d;
    const char *sets[32];
    int nsets;
    unsigned long long promote, kmax;
    int sat, describe;
    const char *save; /* --save FILE: write the model as a preset file */
} mma_opts;

static int parse_opts(const char *sub, int argc, char **argv, mma_opts *o, int probe) {
    memset(o, 0, sizeof *o);
    o->kmax = 64;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        const char **dst = NULL;
        if (!strcmp(s, "--model")) dst = &o->model;
        else if (!strcmp(s, "--a")) dst = &o->a;
        else if (!strcmp(s, "--b")) dst = &o->b;
        else if (!strcmp(s, "--c")) dst = &o->c;
        else if (!strcmp(s, "--d")) dst = &o->d;
        if (dst) {
            if (i + 1 >= argc) return cli_error(sub, "%s needs a value", s);
            *dst = argv[++i];
            continue;
        }
        if (!strcmp(s, "--set")) {
            if (i + 1 >= argc) return cli_error(sub, "--set needs KEY=VALUE");
            if (o->nsets == 32) return cli_error(sub, "too many --set options (at most 32)");
            if (!strchr(argv[i + 1], '=')) return cli_error(sub, "--set %s: expected KEY=VALUE", argv[i + 1]);
            o->sets[o->nsets++] = argv[++i];
        } else if (!strcmp(s, "--promote") && !probe) {
            if (i + 1 >= argc || cli_parse_u64(argv[i + 1], &o->promote) || o->promote > 1u << 30)
                return cli_error(sub, "--promote needs a non-negative integer");
            i++;
        } else if (!strcmp(s, "--kmax") && probe) {
            if (i + 1 >= argc || cli_parse_u64(argv[i + 1], &o->kmax) || o->kmax < 8 || o->kmax > 256)
                return cli_error(sub, "--kmax needs an integer in [8, 256]");
            i++;
        } else if (!strcmp(s, "--sat") && !probe) {
            o->sat = 1;
        } else if (!strcmp(s, "--describe") && !probe) {
            o->describe = 1;
        } else if (!strcmp(s, "--save") && !probe) {
            if (i + 1 >= argc) return cli_error(sub, "--save needs a file name");
            o->save = argv[++i];
        } else {
            return cli_error(sub, "unknown option '%s' (see fpemu %s --help)", s, sub);
        }
    }
    char names[400];
    if (!o->model && probe != 2)
        return cli_error(sub, "--model is required (one of %s, or a preset file)", fpemu_mma_preset_list(names, sizeof names, ", "));
    if (!o->a && o->save && o->model) return 0; /* --save of a whole preset */
    if (!o->a) return cli_error(sub, "--a FMT is required");
    if (!o->b) o->b = o->a;
    return 0;
}

static int is_int_fmt(const char *s, int *is_signed) {
    if (!strcmp(s, "s8") || !strcmp(s, "int8")) { *is_signed = 1; return 1; }
    if (!strcmp(s, "u8") || !strcmp(s, "uint8")) { *is_signed = 0; return 1; }
    return 0;
}

/* Build the model from the options; 0 or 2 after printing. */
static int build_model(const char *sub, const mma_opts *o, fpemu_mma_model *m, int *int_mode) {
    char err[512];
    int sa, sb;
    *int_mode = 0;
    if (is_int_fmt(o->a, &sa) || is_int_fmt(o->b, &sb)) {
        if (!is_int_fmt(o->a, &sa) || !is_int_fmt(o->b, &sb))
            return cli_error(sub, "--a %s --b %s: integer and floating-point inputs do not mix", o->a, o->b);
        if ((o->c && strcmp(o->c, "s32") && strcmp(o->c, "int32")) || (o->d && strcmp(o->d, "s32") && strcmp(o->d, "int32")))
            return cli_error(sub, "integer MMA accumulates in s32 (--c s32 --d s32)");
        if (fpemu_mma_model_preset_int(m, o->model, sa, sb, o->sat, err, sizeof err)) return cli_error(sub, "%s", err);
        *int_mode = 1;
        return 0;
    }
    const fpemu_format *fa = fpemu_format_get(o->a, err, sizeof err);
    if (!fa) return cli_error(sub, "--a: %s", err);
    const fpemu_format *fb = fpemu_format_get(o->b, err, sizeof err);
    if (!fb) return cli_error(sub, "--b: %s", err);
    const fpemu_format *fc = NULL, *fd = NULL;
    if (o->c && !(fc = fpemu_format_get(o->c, err, sizeof err))) return cli_error(sub, "--c: %s", err);
    if (o->d && !(fd = fpemu_format_get(o->d, err, sizeof err))) return cli_error(sub, "--d: %s", err);
    if (fpemu_mma_model_preset(m, o->model, fa, fb, fc, fd, err, sizeof err)) return cli_error(sub, "%s", err);
    for (int i = 0; i < o->nsets; i++) {
        char key[64];
        const char *eq = strchr(o->sets[i], '=');
        size_t kl = (size_t)(eq - o->sets[i]);
        if (kl >= sizeof key) return cli_error(sub, "--set %s: key too long", o->sets[i]);
        memcpy(key, o->sets[i], kl);
        key[kl] = 0;
        if (fpemu_mma_model_set(m, key, eq + 1, err, sizeof err)) return cli_error(sub, "--set %s: %s", o->sets[i], err);
    }
    return 0;
}

/* A printable copy of a field for messages (at most 40 characters). */
static const char *printable(const char *s, size_t len, char *buf) {
    size_t n = len > 40 ? 40 : len;
    for (size_t i = 0; i < n; i++) buf[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
    buf[n] = 0;
    return buf;
}

/* "line L: field F (NAME) 'TEXT': " + what was expected (2). */
static int bad_field(const char *sub, long lineno, size_t field, const char *name, const char *s, size_t len, int why,
                     int digits, uint64_t max, int bits, const char *fmt) {
    char pb[48];
    if (why == -2)
        return cli_error(sub, "line %ld: field %zu (%s) '%s': out of range for %s (%d-bit codes, at most %0*llX)", lineno,
                         field, name, printable(s, len, pb), fmt, bits, digits, (unsigned long long)max);
    return cli_error(sub, "line %ld: field %zu (%s) '%s': expected at most %d hex digits of a %s code", lineno, field, name,
                     printable(s, len, pb), digits, fmt);
}

static void usage_mma(FILE *out) {
    char names[400];
    fpemu_mma_preset_list(names, sizeof names, ", ");
    fprintf(out,
            "usage: fpemu mma --model M --a FMT --b FMT [--c FMT] [--d FMT] [--promote N] [--set KEY=VALUE]... [--sat]\n"
            "       fpemu mma --model M --a FMT --b FMT [--c FMT] [--d FMT] [--set K=V]... --describe [--save FILE]\n"
            "       fpemu mma --model M --save FILE   (every binding of preset M as one preset file)\n"
            "       fpemu mma --gen N [--seed S] [--k K] --model M --a FMT ...   (test vectors, D appended)\n"
            "       fpemu mma --verify [--max-print K] [--exact-nan] --model M --a FMT ...\n"
            "\n"
            "Reads lines `C A0 B0 A1 B1 ... A(k-1) B(k-1)` (hex codes of the c, a and b formats, any k)\n"
            "and writes each line with D (the model's c + sum a_i*b_i, in the d format) appended.\n"
            "\n"
            "  --model M     a preset: %s (the input formats select the\n"
            "                device's instruction entry); or a preset file (a path with a '/' or ending in .preset)\n"
            "  --a/--b FMT   input formats (f16, bf16, tf32 or f32 (truncated to tf32), e4m3, e5m2,\n"
            "                e3m2, e2m3, e2m1, f64; s8/u8 for integer MMA); --b defaults to --a\n"
            "  --c/--d FMT   accumulator formats (default f32; f16 where the device has it; s32 for s8/u8)\n"
            "  --promote N   every N products, add the partial sum (MMA from c = 0) to an f32\n"
            "                accumulator with an f32 add (DeepGEMM's two-level accumulation)\n"
            "  --set K=V     override a model parameter: block, nfrac, align (rz|rd), normalize\n"
            "                (end|each), chain (rounded|f32-add), out_round, out_mant, subnormals\n"
            "                (keep|flush), tf32_truncate, emax_floor (none|N), overflow (inf|max),\n"
            "                zero_c / zero_product (emin|ignore), nan (allones|canonical), group\n"
            "  --sat         integer MMA: clamp to int32 (.satfinite) instead of wrapping\n"
            "  --describe    print the model's parameters, its device, status and sources, and exit\n"
            "  --save FILE   write the model (after --set) as a preset file for --model FILE, and exit\n"
            "  --gen N       write N test lines (random and adversarial classes, the model's D appended;\n"
            "                --seed S, default 1; --k K products a line, default the block size)\n"
            "  --verify      read complete lines (D last), print each mismatch and `N lines, M mismatches`;\n"
            "                exit 1 on a mismatch (any NaN matches any NaN unless --exact-nan)\n"
            "Bad input (unknown model, unsupported format, a malformed line, an odd number of\n"
            "operands) gives a message and exit status 2.\n", names);
}

/* --save: the model m (or every binding of preset `whole`) as a preset file,
 * written atomically (cli_atomic). 0, or 2 after a message. */
static int save_preset(const char *sub, const char *path, const fpemu_mma_model *m, const char *whole) {
    char err[512];
    int n = m ? fpemu_mma_model_format(m, NULL, 0) : fpemu_mma_preset_format(whole, NULL, 0, err, sizeof err);
    if (n < 0) return cli_error(sub, "--save: %s", err);
    char *text = malloc((size_t)n + 1);
    if (!text) return cli_error(sub, "--save %s: out of memory", path);
    if (m) fpemu_mma_model_format(m, text, (size_t)n + 1);
    else fpemu_mma_preset_format(whole, text, (size_t)n + 1, err, sizeof err);
    cli_atomic a;
    int ok = cli_atomic_open(&a, path, "w") == 0;
    if (ok) ok = fputs(text, a.f) >= 0, ok = cli_atomic_close(&a, ok) == 0 && ok;
    int e = errno;
    free(text);
    if (!ok) return cli_error(sub, "--save %s: %s", path, strerror(e ? e : EIO));
    return 0;
}

int cmd_mma(int argc, char **argv) {
    const char *sub = "mma";
    for (int i = 1; i < argc; i++)
        if (cli_is_help(argv[i])) { usage_mma(stdout); return cli_stdout_done(sub, 0); }
    mma_genver_opts gv; /* --gen / --verify (cli/mma_genver.c) */
    int rc = mma_genver_take(sub, &argc, argv, &gv);
    if (rc) return rc;
    mma_opts o;
    rc = parse_opts(sub, argc, argv, &o, 0);
    if (rc) return rc;
    if (o.save && !o.a) return save_preset(sub, o.save, NULL, o.model);
    fpemu_mma_model m;
    int int_mode;
    if ((rc = build_model(sub, &o, &m, &int_mode))) return rc;
    if (o.describe) {
        char buf[1024];
        fpemu_mma_model_describe(&m, buf, sizeof buf);
        printf("%s\ndevice=%s\nstatus=%s\nsource=%s\n", buf, m.device, m.status, m.source);
        if (!o.save) return cli_stdout_done(sub, 0);
    }
    if (o.save) return save_preset(sub, o.save, &m, NULL);
    if (gv.mode) return mma_genver_run(sub, &gv, &m, int_mode, o.a, o.b, o.promote);
    int da = int_mode ? 2 : fpemu_format_hex_digits(m.fa), db = int_mode ? 2 : fpemu_format_hex_digits(m.fb);
    int dc = int_mode ? 8 : fpemu_format_hex_digits(m.fc), dd = int_mode ? 8 : fpemu_format_hex_digits(m.fd);
    uint64_t ma = int_mode ? 0xFF : cli_code_max(m.fa), mb = int_mode ? 0xFF : cli_code_max(m.fb);
    uint64_t mc = int_mode ? 0xFFFFFFFFu : cli_code_max(m.fc);
    int wa = int_mode ? 8 : m.fa->bits + m.fa->pad, wb = int_mode ? 8 : m.fb->bits + m.fb->pad;
    int wc = int_mode ? 32 : m.fc->bits + m.fc->pad;
    size_t cap = 0, acap = 256;
    char *line = NULL;
    uint64_t *a = malloc(acap * sizeof *a), *b = malloc(acap * sizeof *b);
    int32_t *ia = malloc(acap * sizeof *ia), *ib = malloc(acap * sizeof *ib);
    long lineno = 0;
    ssize_t len;
    int status = 0;
    if (!a || !b || !ia || !ib) {
        status = cli_error(sub, "out of memory");
        goto out;
    }
    while ((errno = 0, len = getline(&line, &cap, stdin)) >= 0) {
        lineno++;
        if ((size_t)len != strlen(line)) {
            status = cli_error(sub, "line %ld: NUL byte in the line (expected hex fields separated by spaces)", lineno);
            goto out;
        }
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t')) line[--len] = 0;
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (!*p || *p == '#') {
            puts(line);
            if (ferror(stdout)) goto out; /* a failed write: stop reading, say so below */
            continue;
        }
        /* fields */
        size_t nf = 0;
        uint64_t c = 0;
        for (char *q = p; *q;) {
            while (*q == ' ' || *q == '\t') q++;
            if (!*q) break;
            char *s = q;
            while (*q && *q != ' ' && *q != '\t') q++;
            size_t fl = (size_t)(q - s);
            size_t idx = nf++;
            if (idx == 0) {
                int why = cli_parse_hex(s, fl, dc, mc, &c);
                if (why) {
                    status = bad_field(sub, lineno, 1, "C", s, fl, why, dc, mc, wc, int_mode ? "s32" : m.fc->name);
                    goto out;
                }
                continue;
            }
            size_t k = (idx - 1) / 2;
            int isb = (idx - 1) % 2;
            if (k >= acap) {
                /* each array is replaced only when its realloc succeeded:
                 * a failure keeps the old block, freed below */
                size_t ncap = acap * 2;
                uint64_t *na = realloc(a, ncap * sizeof *a);
                if (na) a = na;
                uint64_t *nb = na ? realloc(b, ncap * sizeof *b) : NULL;
                if (nb) b = nb;
                int32_t *nia = nb ? realloc(ia, ncap * sizeof *ia) : NULL;
                if (nia) ia = nia;
                int32_t *nib = nia ? realloc(ib, ncap * sizeof *ib) : NULL;
                if (nib) ib = nib;
                if (!nib) {
                    status = cli_error(sub, "line %ld: out of memory at %zu products", lineno, k);
                    goto out;
                }
                acap = ncap;
            }
            uint64_t v;
            int why = cli_parse_hex(s, fl, isb ? db : da, isb ? mb : ma, &v);
            if (why) {
                char nm[32];
                snprintf(nm, sizeof nm, "%c%zu", isb ? 'B' : 'A', k);
                status = bad_field(sub, lineno, idx + 1, nm, s, fl, why, isb ? db : da, isb ? mb : ma, isb ? wb : wa,
                                   int_mode ? (isb ? o.b : o.a) : (isb ? m.fb->name : m.fa->name));
                goto out;
            }
            if (isb) b[k] = v;
            else a[k] = v;
        }
        if ((nf - 1) % 2) {
            status = cli_error(sub, "line %ld: expected C followed by pairs A B (got %zu fields: an odd number of operands)", lineno, nf);
            goto out;
        }
        size_t k = (nf - 1) / 2;
        uint64_t d = mma_line_d(&m, int_mode, o.promote, a, b, ia, ib, k, c); /* int: wrapping/saturating per --sat */
        printf("%s %0*llX\n", p, dd, (unsigned long long)d);
        if (ferror(stdout)) break; /* a failed write: stop reading, say so below */
    }
    if (len < 0 && (ferror(stdin) || errno == ENOMEM)) /* not the end of the input */
        status = cli_error(sub, "line %ld: cannot read standard input: %s", lineno + 1, strerror(errno ? errno : EIO));
out:
    free(line), free(a), free(b), free(ia), free(ib);
    return cli_stdout_done(sub, status);
}

/* ---- fpemu probe ------------------------------------------------------------- */

static void usage_probe(FILE *out) {
    fprintf(out,
            "usage: fpemu probe --model M --a FMT [--b FMT] [--c FMT --d FMT] [--kmax N] [--set KEY=VALUE]...\n"
            "\n"
            "Runs the probe vectors of Fasi et al. 2021 and Khattak & Mikaitis' block-FMA tests\n"
            "(docs/tensor-cores.md) against the model wrapped as a black box that may only\n"
            "evaluate dot products, and prints the inferred parameters as key=value lines:\n"
            "block, nfrac, align_round, out_round, out_mant, normalize, subnormals, carry_bits,\n"
            "guard, monotonic, chain, matches (the presets with these parameters, or none),\n"
            "queries, ok. A summary goes to standard error. --set changes the model first (to\n"
            "see the probe find the change).\n"
            "\n"
            "Offline (a device reachable only through files; docs/tensor-cores.md, \"The offline probe\"):\n"
            "  fpemu probe [--model M] --a FMT [...] --state DIR [--plan FILE]\n"
            "      writes round 1's questions (`fpemu mma` lines C A0 B0 ...) to DIR/plan-1.txt (and FILE)\n"
            "  fpemu probe --state DIR --answers FILE [--plan FILE] [--save PRESET]\n"
            "      reads the device's completed lines (each with D appended, as `fpemu mma` writes them)\n"
            "      and prints status=plan with the next round's plan, or status=done with the parameters;\n"
            "      --save writes them as a preset file (--model PRESET)\n"
            "  Without --state: --plan FILE and every round's --answers FILE so far (repeated).\n"
            "  Without --model the formats come from --a/--b/--c/--d (c, d default f32).\n");
}

/* The offline probe (cli/probe_offline.c): the model, when --model is given,
 * is the prior; without it "exact" only binds the formats. */
static int probe_offline(const char *sub, const probe_offline_opts *po, int argc, char **argv) {
    mma_opts o;
    int rc;
    if ((rc = parse_opts(sub, argc, argv, &o, 2))) return rc;
    int have_prior = o.model != NULL;
    if (!have_prior) o.model = "exact";
    fpemu_mma_model m;
    int int_mode;
    if ((rc = build_model(sub, &o, &m, &int_mode))) return rc;
    if (int_mode) return cli_error(sub, "the probe is for floating-point MMA (integer MMA is exact)");
    return cli_stdout_done(sub, probe_offline_run(sub, po, &m, have_prior, (int)o.kmax, argc, argv));
}

int cmd_probe(int argc, char **argv) {
    const char *sub = "probe";
    for (int i = 1; i < argc; i++)
        if (cli_is_help(argv[i])) { usage_probe(stdout); return cli_stdout_done(sub, 0); }
    probe_offline_opts po;
    int rc = probe_offline_take(sub, &argc, &argv, &po);
    if (rc) return rc;
    if (po.active) { /* the offline probe: its options may come from the state folder */
        rc = probe_offline(sub, &po, argc, argv);
        probe_offline_release(&po);
        return rc;
    }
    mma_opts o;
    if ((rc = parse_opts(sub, argc, argv, &o, 1))) return rc;
    fpemu_mma_model m;
    int int_mode;
    if ((rc = build_model(sub, &o, &m, &int_mode))) return rc;
    if (int_mode) return cli_error(sub, "the probe is for floating-point MMA (integer MMA is exact)");
    fpemu_mma_probe_result r;
    if (fpemu_mma_probe(fpemu_mma_model_blackbox, &m, m.fa, m.fb, m.fc, m.fd, (int)o.kmax, &r))
        return cli_error(sub, "the probe could not run against %s (%s)", o.model, r.note);
    char buf[2048];
    fpemu_mma_probe_format(&r, buf, sizeof buf);
    fputs(buf, stdout);
    char nf[80], bl[48];
    if (r.nfrac < 0) snprintf(nf, sizeof nf, "unbounded (exact alignment up to %d bits)", r.nfrac_limit);
    else snprintf(nf, sizeof nf, "%d", r.nfrac);
    if (r.block) snprintf(bl, sizeof bl, "%d products", r.block);
    else snprintf(bl, sizeof bl, "none below k=%d", r.kmax);
    fprintf(stderr,
            "probe of %s (%s x %s -> %s, c %s), %d dot products asked:\n"
            "  block size %s; alignment keeps %s fraction bits (%s); output rounded %s to %d bits;\n"
            "  normalised %s; subnormal inputs %s; >= %d carry bits; %s accumulation\n"
            "  matches: %s%s%s\n",
            o.model, m.fa->name, m.fb->name, m.fd->name, m.fc->name, r.queries, bl, nf, r.align_round, r.out_round,
            r.out_mant, !strcmp(r.normalize, "end") ? "once per block" : r.normalize, r.subnormals, r.carry_bits,
            r.monotonic ? "monotonic" : "non-monotonic", r.matches, r.note[0] ? "\n  note: " : "", r.note);
    return cli_stdout_done(sub, 0);
}
