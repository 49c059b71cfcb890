/* SPDX-License-Identifier: MIT */
/* cmd_run.c: `fpemu run` (operands in, complete lines out) and
 * `fpemu verify` (complete lines in, mismatches out), after Berkeley
 * TestFloat's vector format; docs/cli.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "vector.h"

#define OUT_BUF (1 << 16)

typedef struct outbuf { char *buf; size_t n; int failed; } outbuf;

static void out_flush(outbuf *o) {
    if (o->n && fwrite(o->buf, 1, o->n, stdout) != o->n) o->failed = 1;
    o->n = 0;
}

/* Append the operand fields of a line, each followed by a space. */
static char *put_operands(char *p, const vec_op *op, const uint64_t *v) {
    for (int k = 0; k < op->nargs; k++) {
        p = vec_put_hex(p, v[k], op->in_digits);
        *p++ = ' ';
    }
    return p;
}

static int setup(int argc, char **argv, int verify, vec_cfg *cfg, vec_op *op, vec_reader *rd, vec_draws *dr) {
    const char *sub = verify ? "verify" : "run";
    dr->f = NULL;
    int rc = vec_parse_args(argc, argv, verify, cfg);
    if (rc) return rc < 0 ? -1 : rc;
    char err[1200];
    if (vec_op_parse(cfg->opname, op, err, sizeof err)) return cli_error(sub, "%s", err);
    if (cfg->draws_path && vec_draws_open(dr, cfg->draws_path, err, sizeof err)) return cli_error(sub, "%s", err);
    if (vec_reader_init(rd, stdin)) {
        vec_draws_close(dr);
        return cli_error(sub, "out of memory");
    }
    return 0;
}

/* The draw of vector line i (0-based: blank and comment lines do not
 * count): line i of --sr-draws, else the seed's stream at counter C + i
 * (C = --counter), whether or not earlier lines took a draw, so one line
 * replays alone with --counter C + i. 2 after a message. */
static int line_draw(const char *sub, const vec_cfg *cfg, vec_draws *dr, fpemu_ctx *ctx, const vec_reader *rd,
                     uint64_t i) {
    char err[1200];
    if (!cfg->draws_path) {
        ctx->counter = cfg->first_counter + i;
        return 0;
    }
    if (!vec_draws_next(dr, ctx, err, sizeof err)) return 0;
    return cli_error(sub, "standard input: line %ld: %s", rd->lineno, err);
}

/* Report a line the reader or parser refused; returns 2. */
static int bad_line(const char *sub, int rc, const vec_reader *rd, const char *err) {
    if (rc == -2) return cli_error(sub, "standard input: read error after line %ld", rd->lineno);
    if (rc == -1) return cli_error(sub, "standard input: line %ld: longer than %d bytes (expected a vector line)", rd->lineno, VEC_MAX_LINE);
    return cli_error(sub, "standard input: line %ld: %s", rd->lineno, err);
}

int cmd_run(int argc, char **argv) {
    vec_cfg cfg;
    vec_op op;
    vec_reader rd;
    vec_draws dr;
    int rc = setup(argc, argv, 0, &cfg, &op, &rd, &dr);
    if (rc) return rc < 0 ? 0 : rc;
    outbuf o = {malloc(OUT_BUF), 0, 0};
    if (!o.buf) { vec_reader_free(&rd); vec_draws_close(&dr); return cli_error("run", "out of memory"); }
    uint64_t v[VEC_MAX_FIELDS];
    char err[1200];
    const char *line;
    size_t len;
    int status = 0, nf;
    uint64_t nlines = 0;
    for (;;) {
        int r = vec_read_line(&rd, &line, &len);
        if (r == 0) break;
        if (r < 0) { out_flush(&o); status = bad_line("run", r, &rd, ""); break; }
        /* An operand line, or a complete line whose result is recomputed. */
        int pr = vec_parse_line(&op, line, len, op.nargs, op.nargs + 2, v, &nf, err, sizeof err);
        if (pr > 0) continue;
        if (pr < 0) { out_flush(&o); status = bad_line("run", 0, &rd, err); break; }
        if ((status = line_draw("run", &cfg, &dr, &cfg.ctx, &rd, nlines++))) { out_flush(&o); break; }
        uint64_t res = vec_eval(&op, v, &cfg.ctx);
        if (o.n > OUT_BUF - 128) out_flush(&o);
        char *p = put_operands(o.buf + o.n, &op, v);
        p = vec_put_hex(p, res, op.out_digits);
        *p++ = ' ';
        p = vec_put_hex(p, cfg.ctx.flags, 2);
        *p++ = '\n';
        o.n = (size_t)(p - o.buf);
    }
    if (!status) out_flush(&o);
    if (fflush(stdout) != 0 || o.failed) {
        if (!status) status = cli_error("run", "error writing standard output");
    }
    free(o.buf);
    vec_reader_free(&rd);
    vec_draws_close(&dr);
    return status;
}

int cmd_verify(int argc, char **argv) {
    vec_cfg cfg;
    vec_op op;
    vec_reader rd;
    vec_draws dr;
    int rc = setup(argc, argv, 1, &cfg, &op, &rd, &dr);
    if (rc) return rc < 0 ? 0 : rc;
    uint64_t v[VEC_MAX_FIELDS];
    char err[1200];
    const char *line;
    size_t len;
    long lines = 0, mismatches = 0;
    int status = 0, nf;
    for (;;) {
        int r = vec_read_line(&rd, &line, &len);
        if (r == 0) break;
        if (r < 0) { fflush(stdout); status = bad_line("verify", r, &rd, ""); break; }
        int pr = vec_parse_line(&op, line, len, op.nargs + 2, op.nargs + 2, v, &nf, err, sizeof err);
        if (pr > 0) continue;
        if (pr < 0) { fflush(stdout); status = bad_line("verify", 0, &rd, err); break; }
        if ((status = line_draw("verify", &cfg, &dr, &cfg.ctx, &rd, (uint64_t)lines))) { fflush(stdout); break; }
        lines++;
        uint64_t res = vec_eval(&op, v, &cfg.ctx);
        uint64_t want = v[op.nargs], want_flags = v[op.nargs + 1];
        int same = res == want;
        if (!same && !cfg.exact_nan && op.out && fpemu_is_nan(op.out, res) && fpemu_is_nan(op.out, want))
            same = 1;
        if (same && cfg.ctx.flags == want_flags) continue;
        if (++mismatches > cfg.max_print) continue;
        char buf[256];
        char *p = buf + sprintf(buf, "line %ld: ", rd.lineno);
        p = put_operands(p, &op, v);
        p = memcpy(p, "=> ", 3), p += 3;
        p = vec_put_hex(p, res, op.out_digits);
        *p++ = ' ';
        p = vec_put_hex(p, cfg.ctx.flags, 2);
        p = memcpy(p, ", expected ", 11), p += 11;
        p = vec_put_hex(p, want, op.out_digits);
        *p++ = ' ';
        p = vec_put_hex(p, want_flags, 2);
        *p++ = '\n';
        fwrite(buf, 1, (size_t)(p - buf), stdout);
    }
    if (!status && lines == 0)
        status = cli_error("verify", "standard input: no vector lines (expected complete lines: operands, result, flags)");
    if (!status) {
        if (mismatches > cfg.max_print)
            printf("(%ld more mismatches not printed; --max-print raises the limit)\n", mismatches - cfg.max_print);
        printf("%ld lines, %ld mismatches\n", lines, mismatches);
        status = mismatches ? 1 : 0;
    }
    if (fflush(stdout) != 0 && status != 2) status = cli_error("verify", "error writing standard output");
    vec_reader_free(&rd);
    vec_draws_close(&dr);
    return status;
}
