/* SPDX-License-Identifier: MIT */
/* fuzz_vector.c: the vector lines of `fpemu run` / `fpemu verify`. The first
 * input line is the op name (vec_op_parse: FMT_add, SRC_to_DST, ...), the
 * rest are vector lines read through the same buffered reader the commands
 * use (vec_read_line) and split by vec_parse_line, both as operand lines
 * (run) and complete lines (verify); accepted lines are evaluated. Checks:
 * no crash, every rejection has a message, accepted values fit the field. */
#include "fuzz_common.h"
#include "vector.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    if (n > 65536) return 0;
    const uint8_t *nl = memchr(d, '\n', n);
    size_t l0 = nl ? (size_t)(nl - d) : n;
    if (l0 > 200) return 0;
    char *name = fz_str(d, l0);
    vec_op op;
    char err[512];
    err[0] = 0;
    if (vec_op_parse(name, &op, err, sizeof err)) {
        if (!err[0]) { fprintf(stderr, "vec_op_parse('%s') failed without a message\n", name); abort(); }
        free(name);
        return 0;
    }
    free(name);
    size_t rest = nl ? n - l0 - 1 : 0;
    FILE *in = fmemopen(rest ? (void *)(nl + 1) : (void *)"", rest ? rest : 1, "r");
    if (!in) abort();
    if (!rest) { fclose(in); return 0; }
    vec_reader r;
    if (vec_reader_init(&r, in)) abort();
    const char *line;
    size_t len;
    int rc;
    fpemu_ctx ctx;
    fpemu_ctx_init(&ctx);
    while ((rc = vec_read_line(&r, &line, &len)) == 1) {
        uint64_t v[VEC_MAX_FIELDS];
        int nf = 0;
        for (int mode = 0; mode < 2; mode++) {
            int lo = mode ? op.nargs + 2 : op.nargs, hi = op.nargs + 2;
            err[0] = 0;
            int pr = vec_parse_line(&op, line, len, lo, hi, v, &nf, err, sizeof err);
            if (pr < 0 && !err[0]) { fprintf(stderr, "vec_parse_line rejected without a message\n"); abort(); }
            if (pr == 0) {
                if (nf < lo || nf > hi) { fprintf(stderr, "nfields %d outside %d..%d\n", nf, lo, hi); abort(); }
                for (int k = 0; k < nf; k++) {
                    uint64_t mx = k < op.nargs ? op.in_max : k == op.nargs ? op.out_max : 0x1F;
                    if (v[k] > mx) { fprintf(stderr, "field %d = %llx above max %llx\n", k, (unsigned long long)v[k], (unsigned long long)mx); abort(); }
                }
                ctx.flags = 0;
                uint64_t res = vec_eval(&op, v, &ctx);
                if (res > op.out_max || ctx.flags > 0x1F) {
                    fprintf(stderr, "%s: result %llx above %llx or flags %x\n", op.name, (unsigned long long)res, (unsigned long long)op.out_max, ctx.flags);
                    abort();
                }
            }
        }
    }
    vec_reader_free(&r);
    fclose(in);
    return 0;
}
