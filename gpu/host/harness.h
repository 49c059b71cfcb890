/* SPDX-License-Identifier: MIT */
/* harness.h: bit-exact validation of a "device" (the GPU, or any stand-in
 * with the same interface) against the emu/ models, the report it writes,
 * and the adapter that lets emu's fpemu_mma_probe drive the device.
 *
 * The device is a gpu_backend: it receives operand images already packed
 * for the hardware (layout.h) and returns result images. bin/fpemu-gpu
 * plugs in the CUDA runtime (gpu/kernels.cu); tests and `--fake` plug in
 * gpu_fake_backend, an emu model behind the same interface. */
#ifndef FPEMU_GPU_HARNESS_H
#define FPEMU_GPU_HARNESS_H

#include <stdio.h>
#include "mma.h"
#include "gen.h"

typedef struct gpu_backend {
    const char *name; /* "cuda", "fake" */
    void *user;
    /* ntiles tiles, each chaining `steps` instructions; images as in
     * layout.h, a/b hold ntiles*steps images, c/d ntiles. */
    int (*run_mma)(void *user, const gpu_kind *k, int ntiles, int steps, const uint32_t *a,
                   const uint32_t *b, const uint32_t *c, uint32_t *d, char *err, size_t errlen);
    /* n f32 bit patterns in, n destination codes out. */
    int (*run_cvt)(void *user, const gpu_kind *k, size_t n, const uint32_t *x, uint32_t *y,
                   char *err, size_t errlen);
} gpu_backend;

/* The emu/ preset for a compute capability (x10): "a100" for 8.x below
 * 8.9, "ada" for 8.9, "h100" for 9.x, "b200" for 10.x and 12.x; NULL if
 * none. */
const char *gpu_preset_for_cc(int cc);

/* What a kind's outputs are compared with. */
typedef struct gpu_reference {
    const gpu_kind *kind;
    gpu_fmts f;
    fpemu_mma_model model;    /* MMA kinds */
    /* fp8 mma.sync on sm_90: the SASS shows no fp8 tensor-core path but two
     * f16 HMMA.16816 (products with k%4 < 2, then k%4 >= 2, chained from
     * +0) whose sum is added to the accumulator with an f32 FADD (RN). The
     * reference then models exactly that: f16model on the inputs converted
     * (exactly) to f16 and permuted, then an f32 add. */
    int fp8_via_f16;
    fpemu_mma_model f16model;
    const fpemu_format *f16, *f32;
    char model_name[160];     /* what the report says */
    char replay[640];         /* the fpemu command a mismatch line replays (four format names) */
} gpu_reference;

/* Bind the reference of kind k for preset (e.g. "h100"); cc is the device's
 * compute capability (selects the sm_90 fp8 mma.sync rule). */
int gpu_reference_init(gpu_reference *r, const gpu_kind *k, const char *preset, int cc,
                       char *err, size_t errlen);
/* Override a parameter of the kind's MMA model (fpemu_mma_model_set's keys; the
 * sm_90 fp8 path's f16 model too); the model name and the replay command
 * say so. Conversion and integer kinds are left as they are. */
int gpu_reference_set(gpu_reference *r, const char *key, const char *value, char *err, size_t errlen);
/* d for one output: c + sum_{i<kk} a[i]*b[i], kk = steps*K, evaluated the
 * way `steps` chained instructions are. */
uint64_t gpu_reference_dot(const gpu_reference *r, const uint64_t *a, const uint64_t *b, int kk,
                           uint64_t c);
uint64_t gpu_reference_cvt(const gpu_reference *r, uint32_t x);

/* ---- validation -------------------------------------------------------------- */

typedef struct gpu_tally { uint64_t cases, mismatches, nan_only; } gpu_tally;

enum { GPU_ROW_PROBE = GPU_DIST_COUNT, GPU_ROW_ADVERSARIAL, GPU_ROW_CHAINED, GPU_ROW_COUNT };

typedef struct gpu_kind_result {
    const gpu_kind *kind;
    char model[160];
    char replay[640];
    char skipped[200];        /* non-empty: not run, and why */
    char image[32];           /* "sm_90a" etc., filled by the caller if known */
    gpu_tally rows[GPU_ROW_COUNT]; /* per distribution, probe, adversarial; chained is a subset */
    gpu_tally total;
    int chain_steps;          /* instructions per chained tile */
    /* mismatch lines (capped at max_lines) */
    char **lines;
    int nlines;
    uint64_t dropped;
    /* the tensor-core model's open points (docs/tensor-cores.md): one line
     * per "open point" case (what the device gave and what it means), and
     * the emax floor the floor family places: bits at 2^j kept for
     * j >= floor_kept, cut for j <= floor_cut (floor_seen 0: no such case
     * ran) */
    char **open;
    int nopen, floor_seen, floor_kept, floor_cut, nfrac;
} gpu_kind_result;

typedef struct gpu_validate_opts {
    uint64_t seed;
    uint64_t cases;      /* random outputs per kind (all distributions together) */
    int chain_steps;     /* instructions per chained tile (default 4) */
    int max_lines;       /* mismatch lines kept per kind */
} gpu_validate_opts;
void gpu_validate_opts_init(gpu_validate_opts *o);

/* Run one kind on the backend and compare every output bit. Returns 0 (the
 * result, mismatches included, is in *res), or -1 with err set when the
 * backend failed. */
int gpu_validate_kind(const gpu_backend *be, const gpu_reference *ref, const gpu_validate_opts *o,
                      gpu_kind_result *res, char *err, size_t errlen);
void gpu_kind_result_free(gpu_kind_result *res);

/* The replayable line for one MMA output / one conversion. */
int gpu_format_mma_line(const gpu_reference *r, const uint64_t *a, const uint64_t *b, int kk,
                        uint64_t c, uint64_t gpu_d, uint64_t model_d, const char *what, char *buf,
                        size_t len);
int gpu_format_cvt_line(const gpu_reference *r, uint32_t x, uint64_t gpu_y, uint64_t model_y,
                        const char *what, char *buf, size_t len);

/* ---- report -------------------------------------------------------------------- */

typedef struct gpu_report_info {
    char device[256];       /* device name, or "FAKE (emu model h100)" */
    char uuid[64];
    int cc;                 /* x10 */
    int driver_version, runtime_version; /* CUDA's integer versions (13000), 0 if none */
    char backend[16];
    char preset[32];
    char date[32];          /* ISO 8601 UTC */
    uint64_t seed, cases;
    char command[512];      /* how the run was invoked */
} gpu_report_info;

/* Markdown report: header, one `instruction=NAME cases=N mismatches=M`
 * line per kind that ran, per-kind tables and the mismatch lines. Returns
 * 0, or -1 on a write error. */
int gpu_report_write(FILE *f, const gpu_report_info *info, const gpu_kind_result *res, int n);
/* "NVIDIA H100 80GB HBM3" + "2026-11-22" -> "NVIDIA-H100-80GB-HBM3-2026-11-22.md" */
void gpu_report_filename(const gpu_report_info *info, char *buf, size_t len);

/* ---- the probe's black box -------------------------------------------------- */

typedef struct gpu_probe_box {
    const gpu_backend *be;
    const gpu_kind *kind;
    int max_steps;          /* longest chain allowed (k up to max_steps*K) */
    int calls;
    char err[256];          /* the backend's last error, if a call failed */
} gpu_probe_box;
/* fpemu_mma_blackbox over a kind: the vector in row 0 of A and column 0 of B,
 * zeros elsewhere, c in C[0][0]; k > K chains ceil(k/K) instructions (each
 * instruction's rounded f32 output is the next one's C). */
int gpu_probe_blackbox(void *user, const uint64_t *a, const uint64_t *b, int k, uint64_t c,
                       uint64_t *d);

/* ---- a stand-in device: an emu reference behind the backend interface -- */

typedef struct gpu_fake {
    const char *preset;     /* e.g. "h100" */
    int cc;
    /* Planted difference, for tests: when plant_kind matches, the output
     * whose inputs make plant_match() true gets its low bit flipped. */
    int plant_kind;         /* gpu_kind_id, or -1 */
    int (*plant_match)(const gpu_kind *k, const uint64_t *a, const uint64_t *b, int kk, uint64_t c);
} gpu_fake;
void gpu_fake_backend(gpu_backend *be, gpu_fake *fake);

/* ---- recordings: a device's answers kept, and replayed (record.c) ------ */

#define GPU_REC_MAGIC "fpemu-gpu recording 1"
typedef struct gpu_recording {
    const gpu_backend *inner; /* recording: the device asked; NULL when replaying */
    char hdr[8192];           /* key=value lines */
    size_t hdr_len;
    unsigned char *data;      /* records (recording), or the whole file (replay) */
    size_t len, cap, pos;
    uint64_t calls;
} gpu_recording;
/* be answers through inner and keeps every call's outputs in r. */
void gpu_record_backend(gpu_backend *be, gpu_recording *r, const gpu_backend *inner);
/* A key=value header line (device, driver, ...); 0, or -1 with err. */
int gpu_record_header(gpu_recording *r, const char *key, const char *value, char *err, size_t errlen);
/* Write the recording atomically; 0, or -1 with err. */
int gpu_record_write(gpu_recording *r, const char *path, char *err, size_t errlen);
/* be answers from the recording at path: each call must be the recorded
 * call (kind, shape and input hash), in order, or it fails with err. */
int gpu_replay_open(gpu_backend *be, gpu_recording *r, const char *path, char *err, size_t errlen);
/* A header value (0), or -1 if the key is absent. */
int gpu_replay_header(const gpu_recording *r, const char *key, char *value, size_t len);
/* Were all recorded calls answered? */
int gpu_replay_done(const gpu_recording *r);
void gpu_recording_free(gpu_recording *r);

/* Write a file under gpu/host/outfile.h's rule (shared with bin/fpemu): a
 * new path or a regular file atomically (PATH.tmp.PID, then rename), a
 * symbolic link's target that way, a device or FIFO directly; never
 * replaces a link or a device. 0, or -1 with err naming the file. */
int gpu_write_file_atomic(const char *path, const char *data, size_t len, char *err, size_t errlen);

#endif
