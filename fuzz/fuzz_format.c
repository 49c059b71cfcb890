/* fuzz_format.c: format spec strings (fpemu_format_get: names, aliases,
 * eXmY[fn|fnuz], binary8pP[e|f], custom:k=v,...). A spec that parses must
 * give a consistent descriptor: decoding every code (or a sample) must not
 * crash, and the hex width must fit the container. */
#include "fuzz_common.h"
#include "fpemu.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
    if (n > 512) return 0;
    char *s = fz_str(d, n);
    char err[256];
    const fpemu_format *f = fpemu_format_get(s, err, sizeof err);
    if (!f) {
        if (!err[0]) { fprintf(stderr, "fpemu_format_get('%s') failed without a message\n", s); abort(); }
    } else {
        int hd = fpemu_format_hex_digits(f);
        if (f->bits < 1 || f->bits + f->pad > f->container || hd * 4 < f->bits + f->pad) {
            fprintf(stderr, "'%s': bits %d pad %d container %d hex %d\n", s, f->bits, f->pad, f->container, hd);
            abort();
        }
        fpemu_ctx c;
        fpemu_ctx_init(&c);
        uint64_t ncodes = f->bits >= 12 ? 4096 : (uint64_t)1 << f->bits;
        for (uint64_t i = 0; i < ncodes; i++) {
            uint64_t mask = f->bits >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << f->bits) - 1;
            uint64_t code = (f->bits >= 12 ? fpemu_random64(1, i) & mask : i) << f->pad;
            double x = fpemu_to_double(f, code);
            uint64_t back = fpemu_from_double(f, x, &c);
            uint64_t y = fpemu_add(f, code, back, &c);
            (void)fpemu_mul(f, y, code, &c);
            (void)fpemu_classify(f, code);
        }
    }
    free(s);
    return 0;
}
