/* SPDX-License-Identifier: MIT */
/* record.c: a recording of a device's answers, and a backend that replays
 * it.
 *
 * Inputs are generated from the seed, so a device run is fully described by
 * its outputs: `fpemu-gpu validate --record FILE` (and probe) keep, per
 * backend call, the kind, the shape, a hash of the inputs and the output
 * words. `--replay FILE` answers the same calls from the file on a machine
 * without a GPU: the report is rebuilt bit for bit, and a changed model
 * (`--set`) can be checked against the hardware's outputs offline. A call
 * whose kind, shape or inputs differ from the recorded one is an error, so
 * a replay never answers a question the hardware was not asked.
 *
 * File: a text header (first line GPU_REC_MAGIC, then key=value lines,
 * then a line "end"), then binary records in the host's byte order: ten
 * header words (rec_head) and the output words. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"

#define REC_WORD 0x31434552u /* "REC1" */

static uint64_t fnv(uint64_t h, const uint32_t *w, size_t n) {
    for (size_t i = 0; i < n; i++) {
        h ^= w[i];
        h *= UINT64_C(0x100000001B3);
    }
    return h;
}
#define FNV0 UINT64_C(0xCBF29CE484222325)

static int grow(gpu_recording *r, size_t more) {
    if (r->len + more <= r->cap) return 0;
    size_t cap = r->cap ? r->cap : 1 << 16;
    while (cap < r->len + more) cap *= 2;
    unsigned char *p = realloc(r->data, cap);
    if (!p) return -1;
    r->data = p, r->cap = cap;
    return 0;
}

static int put(gpu_recording *r, const void *p, size_t n) {
    if (grow(r, n)) return -1;
    memcpy(r->data + r->len, p, n);
    r->len += n;
    return 0;
}

/* header words: REC_WORD, kind id, op (0 mma, 1 cvt), steps, n (tiles or
 * values, 2 words), output words (2 words); then the input hash (2 words) */
typedef struct { uint32_t w[10]; } rec_head;

static rec_head head_of(const gpu_kind *k, int op, int steps, uint64_t n, uint64_t nout, uint64_t hash) {
    rec_head h = {{REC_WORD, (uint32_t)k->id, (uint32_t)op, (uint32_t)steps, (uint32_t)n, (uint32_t)(n >> 32),
                   (uint32_t)nout, (uint32_t)(nout >> 32), (uint32_t)hash, (uint32_t)(hash >> 32)}};
    return h;
}

static int put_rec(gpu_recording *r, rec_head h, const uint32_t *out, uint64_t nout, char *err, size_t errlen) {
    if (put(r, &h, sizeof h) || put(r, out, sizeof *out * (size_t)nout)) {
        snprintf(err, errlen, "recording: out of memory");
        return -1;
    }
    r->calls++;
    return 0;
}

/* The next record must be h exactly; its outputs go to out. */
static int take_rec(gpu_recording *r, rec_head h, uint32_t *out, uint64_t nout, char *err, size_t errlen) {
    rec_head g;
    if (r->pos + sizeof g > r->len) {
        snprintf(err, errlen, "replay: the recording ends after call %llu; call %llu (kind %u) is not in it",
                 (unsigned long long)r->calls, (unsigned long long)r->calls + 1, h.w[1]);
        return -1;
    }
    memcpy(&g, r->data + r->pos, sizeof g);
    if (memcmp(&g, &h, sizeof g)) {
        snprintf(err, errlen,
                 "replay: call %llu differs from the recorded one (kind %u op %u steps %u n %llu hash %08x%08x "
                 "recorded; kind %u op %u steps %u n %llu hash %08x%08x asked): run with the options of the "
                 "recording (seed, cases, chain, kinds, kmax)",
                 (unsigned long long)r->calls + 1, g.w[1], g.w[2], g.w[3],
                 (unsigned long long)g.w[4] | (unsigned long long)g.w[5] << 32, g.w[9], g.w[8], h.w[1], h.w[2], h.w[3],
                 (unsigned long long)h.w[4] | (unsigned long long)h.w[5] << 32, h.w[9], h.w[8]);
        return -1;
    }
    size_t bytes = sizeof *out * (size_t)nout;
    if (r->pos + sizeof g + bytes > r->len) {
        snprintf(err, errlen, "replay: the recording ends inside call %llu", (unsigned long long)r->calls + 1);
        return -1;
    }
    memcpy(out, r->data + r->pos + sizeof g, bytes);
    r->pos += sizeof g + bytes;
    r->calls++;
    return 0;
}

static int rec_mma(void *user, const gpu_kind *k, int ntiles, int steps, const uint32_t *a, const uint32_t *b,
                   const uint32_t *c, uint32_t *d, char *err, size_t errlen) {
    gpu_recording *r = user;
    size_t na = (size_t)ntiles * steps * gpu_a_words(k), nb = (size_t)ntiles * steps * gpu_b_words(k);
    size_t ncd = (size_t)ntiles * gpu_cd_words(k);
    uint64_t hash = fnv(fnv(fnv(FNV0, a, na), b, nb), c, ncd);
    rec_head h = head_of(k, 0, steps, (uint64_t)ntiles, ncd, hash);
    if (r->inner) {
        if (r->inner->run_mma(r->inner->user, k, ntiles, steps, a, b, c, d, err, errlen)) return -1;
        return put_rec(r, h, d, ncd, err, errlen);
    }
    return take_rec(r, h, d, ncd, err, errlen);
}

static int rec_cvt(void *user, const gpu_kind *k, size_t n, const uint32_t *x, uint32_t *y, char *err,
                   size_t errlen) {
    gpu_recording *r = user;
    rec_head h = head_of(k, 1, 0, (uint64_t)n, (uint64_t)n, fnv(FNV0, x, n));
    if (r->inner) {
        if (r->inner->run_cvt(r->inner->user, k, n, x, y, err, errlen)) return -1;
        return put_rec(r, h, y, n, err, errlen);
    }
    return take_rec(r, h, y, n, err, errlen);
}

void gpu_record_backend(gpu_backend *be, gpu_recording *r, const gpu_backend *inner) {
    memset(r, 0, sizeof *r);
    r->inner = inner;
    be->name = inner->name;
    be->user = r;
    be->run_mma = rec_mma;
    be->run_cvt = rec_cvt;
}

int gpu_record_header(gpu_recording *r, const char *key, const char *value, char *err, size_t errlen) {
    size_t kl = strlen(key), vl = strlen(value);
    if (!kl || strchr(key, '=') || strchr(key, '\n') || strchr(value, '\n') || r->hdr_len + kl + vl + 2 > sizeof r->hdr) {
        snprintf(err, errlen, "recording: header line '%s': empty, with '=' or a newline, or too long", key);
        return -1;
    }
    r->hdr_len += (size_t)snprintf(r->hdr + r->hdr_len, sizeof r->hdr - r->hdr_len, "%s=%s\n", key, value);
    return 0;
}

int gpu_record_write(gpu_recording *r, const char *path, char *err, size_t errlen) {
    static const char magic[] = GPU_REC_MAGIC "\n", end[] = "end\n";
    size_t ml = sizeof magic - 1, el = sizeof end - 1, total = ml + r->hdr_len + el + r->len;
    char *all = malloc(total);
    if (!all) {
        snprintf(err, errlen, "recording: out of memory");
        return -1;
    }
    memcpy(all, magic, ml);
    memcpy(all + ml, r->hdr, r->hdr_len);
    memcpy(all + ml + r->hdr_len, end, el);
    if (r->len) memcpy(all + ml + r->hdr_len + el, r->data, r->len);
    int rc = gpu_write_file_atomic(path, all, total, err, errlen);
    free(all);
    return rc;
}

int gpu_replay_open(gpu_backend *be, gpu_recording *r, const char *path, char *err, size_t errlen) {
    memset(r, 0, sizeof *r);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "--replay '%s': cannot open", path);
        return -1;
    }
    unsigned char buf[1 << 16];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        if (put(r, buf, got)) {
            fclose(f);
            snprintf(err, errlen, "--replay '%s': out of memory", path);
            return -1;
        }
    int bad = ferror(f);
    fclose(f);
    size_t ml = strlen(GPU_REC_MAGIC);
    if (bad || r->len < ml + 1 || memcmp(r->data, GPU_REC_MAGIC "\n", ml + 1)) {
        gpu_recording_free(r);
        snprintf(err, errlen, "--replay '%s': not a recording (expected a first line '%s')", path, GPU_REC_MAGIC);
        return -1;
    }
    /* header lines up to "end" */
    size_t p = ml + 1;
    for (;;) {
        unsigned char *nl = memchr(r->data + p, '\n', r->len - p);
        if (!nl) {
            gpu_recording_free(r);
            snprintf(err, errlen, "--replay '%s': the header has no line 'end'", path);
            return -1;
        }
        size_t ll = (size_t)(nl - (r->data + p));
        if (ll == 3 && !memcmp(r->data + p, "end", 3)) {
            r->pos = p + 4;
            break;
        }
        if (!memchr(r->data + p, '=', ll) || r->hdr_len + ll + 1 > sizeof r->hdr) {
            gpu_recording_free(r);
            snprintf(err, errlen, "--replay '%s': header line without '=', or header too long, at byte %zu", path, p);
            return -1;
        }
        memcpy(r->hdr + r->hdr_len, r->data + p, ll + 1);
        r->hdr_len += ll + 1;
        p += ll + 1;
    }
    be->name = "replay";
    be->user = r;
    be->run_mma = rec_mma;
    be->run_cvt = rec_cvt;
    return 0;
}

int gpu_replay_header(const gpu_recording *r, const char *key, char *value, size_t len) {
    size_t kl = strlen(key), p = 0;
    while (p < r->hdr_len) {
        const char *line = r->hdr + p, *nl = memchr(line, '\n', r->hdr_len - p);
        size_t ll = nl ? (size_t)(nl - line) : r->hdr_len - p;
        if (ll > kl && line[kl] == '=' && !memcmp(line, key, kl)) {
            snprintf(value, len, "%.*s", (int)(ll - kl - 1), line + kl + 1);
            return 0;
        }
        p += ll + 1;
    }
    return -1;
}

int gpu_replay_done(const gpu_recording *r) { return r->pos == r->len; }

void gpu_recording_free(gpu_recording *r) {
    free(r->data);
    r->data = NULL;
    r->len = r->cap = r->pos = r->hdr_len = 0;
}
