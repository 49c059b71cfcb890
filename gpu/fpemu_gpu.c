/* SPDX-License-Identifier: MIT */
/* fpemu_gpu.c: bin/fpemu-gpu, the GPU side of fpemu.
 *
 *   fpemu-gpu info       the device, its compute capability, driver and
 *                        runtime versions, and which kernels apply
 *   fpemu-gpu validate   run every applicable kernel on generated inputs,
 *                        compare every output bit with the emu/ preset of
 *                        the device, write reports/gpu/DEVICE-DATE.md
 *   fpemu-gpu probe      drive emu's MMA probe through the tensor cores and
 *                        print the inferred parameters and matching presets
 *   fpemu-gpu kinds      the kernel table (machine-readable; the SASS test
 *                        reads it)
 *
 * Exit status: 0 success (validate: no mismatch), 1 validate found
 * mismatches, 2 bad usage, no usable CUDA device, or a write that failed
 * (a file, or standard output: every command checks it at the end). --fake PRESET replaces
 * the GPU by an emu model behind the same interface (a test of the
 * harness, never a GPU result: reports say FAKE). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "gpu_rt.h"
#include "host/harness.h"

#define PROG "fpemu-gpu"

/* 1 once a failed write on standard output has been reported (main's
 * stdout_done then only sets the status) */
static int stdout_reported;

/* ---- device access ---------------------------------------------------------------- */

typedef struct device {
    int fake, replay;
    gpu_fake fk;
    gpu_rt_device rt;
    gpu_backend be, inner;
    gpu_recording rec;   /* --record (inner answers) or --replay */
    const char *record;  /* --record FILE */
    int cc;
    int runtime_version;
    const char *preset;
} device;

static int cuda_mma(void *user, const gpu_kind *k, int ntiles, int steps, const uint32_t *a, const uint32_t *b,
                    const uint32_t *c, uint32_t *d, char *err, size_t errlen) {
    int arch = -1;
    (void)user;
    if (gpu_rt_run_mma((int)k->id, ntiles, steps, a, gpu_a_words(k), b, gpu_b_words(k), c, d, gpu_cd_words(k),
                       &arch, err, errlen))
        return -1;
    if (arch < 0) {
        snprintf(err, errlen, "kernel %s has no body for this device's image (nothing computed)", k->kernel);
        return -1;
    }
    return 0;
}

static int cuda_cvt(void *user, const gpu_kind *k, size_t n, const uint32_t *x, uint32_t *y, char *err,
                    size_t errlen) {
    int arch = -1;
    (void)user;
    if (gpu_rt_run_cvt((int)k->id, n, x, y, &arch, err, errlen)) return -1;
    if (arch < 0) {
        snprintf(err, errlen, "kernel %s has no body for this device's image (nothing computed)", k->kernel);
        return -1;
    }
    return 0;
}

/* The lowest compute capability the preset's row lists (emu/mma.c), or -1. */
static int fake_cc(const char *preset) {
    const fpemu_mma_preset_info *p = fpemu_mma_preset_find(preset);
    return p && p->cc_min > 0 ? p->cc_min : -1;
}

static int kind_runs(const device *dv, const gpu_kind *k, char *image, size_t ilen, char *why, size_t wlen);

/* "fpemu-gpu SUB ARGS..." as typed, for reports and recordings. */
static void command_line(int argc, char **argv, char *buf, size_t len) {
    size_t pos = 0;
    buf[0] = 0;
    for (int i = 0; i < argc && pos + 1 < len; i++)
        pos += (size_t)snprintf(buf + pos, len - pos, "%s%s", i ? " " : PROG " ", argv[i]);
}

/* The current time, ISO 8601 UTC. */
static void utc_now(char *buf, size_t len) {
    time_t now = time(NULL);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
}

/* --replay FILE: the device of a recording, answering from it. */
static int open_replay(device *dv, const char *path, const char *sub) {
    char err[512], v[256];
    if (gpu_replay_open(&dv->be, &dv->rec, path, err, sizeof err)) {
        fprintf(stderr, PROG " %s: %s\n", sub, err);
        return 2;
    }
    dv->replay = 1;
    if (gpu_replay_header(&dv->rec, "cc", v, sizeof v) || sscanf(v, "%d", &dv->cc) != 1) {
        fprintf(stderr, PROG " %s: --replay '%s': the header has no line cc=N\n", sub, path);
        gpu_recording_free(&dv->rec);
        return 2;
    }
    dv->rt.cc = dv->cc;
    if (gpu_replay_header(&dv->rec, "device", dv->rt.name, sizeof dv->rt.name))
        snprintf(dv->rt.name, sizeof dv->rt.name, "unknown");
    if (gpu_replay_header(&dv->rec, "uuid", dv->rt.uuid, sizeof dv->rt.uuid)) dv->rt.uuid[0] = 0;
    if (!gpu_replay_header(&dv->rec, "driver", v, sizeof v)) dv->rt.driver_version = atoi(v);
    if (!gpu_replay_header(&dv->rec, "runtime", v, sizeof v)) dv->runtime_version = atoi(v);
    dv->preset = gpu_preset_for_cc(dv->cc);
    return 0;
}

/* --record FILE: keep every answer of the device opened, with its header. */
static int start_record(device *dv, const char *path, const char *sub, int argc, char **argv) {
    char err[512], v[1024], image[64], why[256], key[96], date[32];
    dv->record = path;
    dv->inner = dv->be;
    gpu_record_backend(&dv->be, &dv->rec, &dv->inner);
    command_line(argc, argv, v, sizeof v);
    utc_now(date, sizeof date);
    int bad = gpu_record_header(&dv->rec, "device", dv->rt.name, err, sizeof err) ||
              gpu_record_header(&dv->rec, "command", v, err, sizeof err) ||
              gpu_record_header(&dv->rec, "date", date, err, sizeof err) ||
              gpu_record_header(&dv->rec, "uuid", dv->rt.uuid, err, sizeof err);
    snprintf(v, sizeof v, "%d", dv->cc);
    bad = bad || gpu_record_header(&dv->rec, "cc", v, err, sizeof err);
    snprintf(v, sizeof v, "%d", dv->rt.driver_version);
    bad = bad || gpu_record_header(&dv->rec, "driver", v, err, sizeof err);
    snprintf(v, sizeof v, "%d", dv->runtime_version);
    bad = bad || gpu_record_header(&dv->rec, "runtime", v, err, sizeof err);
    for (int i = 0; i < GPU_KIND_COUNT && !bad; i++) {
        const gpu_kind *k = gpu_kind_get(i);
        if (!kind_runs(dv, k, image, sizeof image, why, sizeof why)) continue;
        snprintf(key, sizeof key, "image.%s", k->name);
        bad = gpu_record_header(&dv->rec, key, image, err, sizeof err);
    }
    if (bad) {
        fprintf(stderr, PROG " %s: %s\n", sub, err);
        return 2;
    }
    return 0;
}

static int finish_record(device *dv, const char *sub, int failed) {
    char err[512];
    int rc = 0;
    if (dv->record) {
        if (gpu_record_write(&dv->rec, dv->record, err, sizeof err)) {
            fprintf(stderr, PROG " %s: --record '%s': %s\n", sub, dv->record, err);
            rc = 2;
        } else {
            fprintf(stderr, PROG " %s: recorded %llu calls in %s\n", sub, (unsigned long long)dv->rec.calls,
                    dv->record);
        }
    } else if (dv->replay && !failed && !gpu_replay_done(&dv->rec)) {
        fprintf(stderr, PROG " %s: the recording holds calls that were not asked (%llu answered): were the "
                        "options those of the recording?\n", sub, (unsigned long long)dv->rec.calls);
        rc = 2;
    }
    if (dv->record || dv->replay) gpu_recording_free(&dv->rec);
    return rc;
}

/* --fake PRESET, or the CUDA device. */
static int open_cuda(device *dv, const char *fake, const char *sub) {
    char err[512];
    if (fake) {
        dv->fake = 1;
        dv->cc = fake_cc(fake);
        if (dv->cc < 0) {
            char list[300] = "";
            for (int i = 0; i < fpemu_mma_preset_count(); i++) {
                const fpemu_mma_preset_info *p = fpemu_mma_preset_get(i);
                size_t o = strlen(list);
                if (p->cc_min > 0 && o < sizeof list) snprintf(list + o, sizeof list - o, "%s%s", o ? ", " : "", p->name);
            }
            fprintf(stderr, PROG " %s: --fake '%s': expected a device preset with a compute capability (%s)\n", sub, fake, list);
            return 2;
        }
        dv->fk.preset = fake;
        dv->fk.cc = dv->cc;
        dv->fk.plant_kind = -1;
        gpu_fake_backend(&dv->be, &dv->fk);
        dv->preset = fake;
        snprintf(dv->rt.name, sizeof dv->rt.name, "FAKE (emu model %s, no GPU)", fake);
        dv->rt.cc = dv->cc;
        return 0;
    }
    if (gpu_rt_open(&dv->rt, err, sizeof err)) {
        fprintf(stderr, PROG " %s: no CUDA device: %s\n", sub, err);
        return 2;
    }
    dv->cc = dv->rt.cc;
    dv->runtime_version = gpu_rt_runtime_version();
    dv->preset = gpu_preset_for_cc(dv->cc);
    dv->be.name = "cuda";
    dv->be.run_mma = cuda_mma;
    dv->be.run_cvt = cuda_cvt;
    return 0;
}

/* The device a command talks to: --fake, --replay FILE or the GPU, and with
 * --record FILE every answer of it kept (argc/argv name the command in the
 * recording). */
static int open_device(device *dv, const char *fake, const char *replay, const char *record, const char *sub,
                       int argc, char **argv) {
    memset(dv, 0, sizeof *dv);
    if ((fake && replay) || (record && replay)) {
        fprintf(stderr, PROG " %s: --%s and --replay: expected one of them\n", sub, fake ? "fake" : "record");
        return 2;
    }
    int rc = replay ? open_replay(dv, replay, sub) : open_cuda(dv, fake, sub);
    if (!rc && record) rc = start_record(dv, record, sub, argc, argv);
    return rc;
}

/* Can this kind run here? why gets the reason when not. */
static int kind_runs(const device *dv, const gpu_kind *k, char *image, size_t ilen, char *why, size_t wlen) {
    int bin = 0, ptx = 0;
    char err[256];
    image[0] = why[0] = 0;
    if (!gpu_kind_supported(k, dv->cc)) {
        snprintf(why, wlen, "needs %s compute capability %d.%d (device has %d.%d)",
                 k->arch_specific ? "exactly" : "at least", k->min_cc / 10, k->min_cc % 10, dv->cc / 10, dv->cc % 10);
        return 0;
    }
    if (dv->fake) {
        snprintf(image, ilen, "fake");
        return 1;
    }
    if (dv->replay) {
        char key[96];
        snprintf(key, sizeof key, "image.%s", k->name);
        if (!gpu_replay_header(&dv->rec, key, image, ilen)) return 1;
        snprintf(why, wlen, "not in the recording");
        return 0;
    }
    if (gpu_rt_kernel_image((int)k->id, &bin, &ptx, err, sizeof err)) {
        snprintf(why, wlen, "no kernel image for this device: %.200s", err);
        return 0;
    }
    snprintf(image, ilen, "sm_%d%s (PTX %d)", bin, bin == 90 ? "a" : "", ptx);
    if (ptx < k->min_cc && bin != 89 && bin != 90) {
        /* a JIT image from compute_80 PTX (newer devices): the kernel was
         * compiled without the instruction and has an empty body */
        snprintf(why, wlen, "only the compute_80 PTX runs on this device, and the instruction needs sm_%d", k->min_cc);
        return 0;
    }
    return 1;
}

static void version_str(int v, char *buf, size_t len) {
    if (v <= 0) snprintf(buf, len, "none");
    else snprintf(buf, len, "%d.%d (%d)", v / 1000, (v % 1000) / 10, v);
}

/* ---- info --------------------------------------------------------------------------- */

static int cmd_info(int argc, char **argv) {
    device dv;
    char rt[32], drv[32], image[64], why[256];
    const char *fake = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--fake") && i + 1 < argc) fake = argv[++i];
        else {
            fprintf(stderr, PROG " info: unknown option '%s' (expected --fake PRESET)\n", argv[i]);
            return 2;
        }
    }
    version_str(gpu_rt_runtime_version(), rt, sizeof rt);
    printf("fpemu-gpu %s: CUDA runtime %s (static); kernels for sm_80, sm_89, sm_90a, PTX compute_80\n",
           FPEMU_VERSION, rt);
    int rc = open_device(&dv, fake, NULL, NULL, "info", argc, argv);
    if (rc) {
        printf("device: none\n");
        return rc;
    }
    version_str(dv.rt.driver_version, drv, sizeof drv);
    printf("device: %s\n", dv.rt.name);
    printf("compute capability: %d.%d\n", dv.cc / 10, dv.cc % 10);
    if (!dv.fake) {
        printf("driver: %s\nruntime: %s\n", drv, rt);
        printf("multiprocessors: %d, memory: %.1f GiB, uuid: %s\n", dv.rt.sm_count,
               (double)dv.rt.global_mem / (1024.0 * 1024.0 * 1024.0), dv.rt.uuid);
    }
    printf("emu preset: %s\n", dv.preset ? dv.preset : "none (no model for this compute capability)");
    printf("kernels:\n");
    for (int i = 0; i < GPU_KIND_COUNT; i++) {
        const gpu_kind *k = gpu_kind_get(i);
        if (kind_runs(&dv, k, image, sizeof image, why, sizeof why)) {
            int t = dv.cc == 89 ? 1 : dv.cc >= 90 && dv.cc < 100 ? 2 : 0;
            if (dv.cc >= 100 && !dv.fake)
                printf("  %-40s yes  image %s, SASS JIT-compiled from PTX (not checked)\n", k->name, image);
            else
                printf("  %-40s yes  image %s, SASS %s%s\n", k->name, image, k->sass[t] ? k->sass[t] : "-",
                       k->note && t == 2 ? " (f16 path, see note)" : "");
        } else {
            printf("  %-40s no   %s\n", k->name, why);
        }
    }
    return 0;
}

/* ---- kinds --------------------------------------------------------------------------- */

static int cmd_kinds(int argc, char **argv) {
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, PROG " kinds: takes no arguments\n");
        return 2;
    }
    printf("# kernel target sass instruction\n");
    for (int i = 0; i < GPU_KIND_COUNT; i++) {
        const gpu_kind *k = gpu_kind_get(i);
        for (int t = 0; t < 3; t++)
            printf("%s %s %s %s\n", k->kernel, gpu_sass_arch_name[t], k->sass[t] ? k->sass[t] : "-", k->name);
    }
    return 0;
}

/* ---- validate ------------------------------------------------------------------------- */

static int parse_u64(const char *sub, const char *opt, const char *s, unsigned long long max, unsigned long long *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (!*s || *end || errno || s[0] == '-' || v > max) {
        fprintf(stderr, PROG " %s: %s '%s': expected an integer from 0 to %llu\n", sub, opt, s, max);
        return -1;
    }
    *out = v;
    return 0;
}

static int mkdirs(const char *dir) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0777) && errno != EEXIST) return -1;
            *p = '/';
        }
    if (mkdir(buf, 0777) && errno != EEXIST) return -1;
    return 0;
}

static int select_kind(const char *sub, const char *name, int *sel) {
    const gpu_kind *k = gpu_kind_find(name);
    if (!k) {
        fprintf(stderr, PROG " %s: --kind '%s': unknown (expected one of:", sub, name);
        for (int i = 0; i < GPU_KIND_COUNT; i++) fprintf(stderr, " %s", gpu_kind_get(i)->name);
        fprintf(stderr, ")\n");
        return -1;
    }
    sel[k->id] = 1;
    return 0;
}

static int cmd_validate(int argc, char **argv) {
    gpu_validate_opts o;
    const char *out_dir = "reports/gpu", *fake = NULL, *record = NULL, *replay = NULL;
    const char *sets[32];
    int sel[GPU_KIND_COUNT] = {0}, any_sel = 0, to_stdout = 0, nsets = 0;
    unsigned long long v;
    gpu_validate_opts_init(&o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf("usage: " PROG " validate [--cases N] [--seed S] [--out DIR | --stdout] [--kind NAME]...\n"
                   "                          [--chain N] [--max-lines N] [--fake PRESET]\n"
                   "                          [--record FILE | --replay FILE] [--set KEY=VALUE]...\n"
                   "  --record FILE   keep every output of the device in FILE\n"
                   "  --replay FILE   answer from a recording instead of a device (same options as\n"
                   "                  the recorded run: the inputs come from the seed)\n"
                   "  --set KEY=VALUE change a parameter of every MMA model compared with (the keys of\n"
                   "                  `fpemu mma --set`); the report and the replay lines say so\n");
            return 0;
        }
        if (!strcmp(a, "--stdout")) { to_stdout = 1; continue; }
        if (i + 1 >= argc) {
            fprintf(stderr, PROG " validate: unknown option '%s' or missing value (see --help)\n", a);
            return 2;
        }
        const char *val = argv[++i];
        if (!strcmp(a, "--cases")) {
            if (parse_u64("validate", a, val, 100000000ULL, &v)) return 2;
            o.cases = v;
        } else if (!strcmp(a, "--seed")) {
            if (parse_u64("validate", a, val, UINT64_MAX, &v)) return 2;
            o.seed = v;
        } else if (!strcmp(a, "--chain")) {
            if (parse_u64("validate", a, val, GPU_MAX_STEPS, &v)) return 2;
            o.chain_steps = (int)v;
        } else if (!strcmp(a, "--max-lines")) {
            if (parse_u64("validate", a, val, 1000000, &v)) return 2;
            o.max_lines = (int)v;
        } else if (!strcmp(a, "--out")) {
            out_dir = val;
        } else if (!strcmp(a, "--kind")) {
            if (select_kind("validate", val, sel)) return 2;
            any_sel = 1;
        } else if (!strcmp(a, "--fake")) {
            fake = val;
        } else if (!strcmp(a, "--record")) {
            record = val;
        } else if (!strcmp(a, "--replay")) {
            replay = val;
        } else if (!strcmp(a, "--set")) {
            const char *eq = strchr(val, '=');
            if (!eq || eq == val || !eq[1] || nsets == (int)(sizeof sets / sizeof sets[0])) {
                fprintf(stderr, PROG " validate: --set '%s': expected KEY=VALUE (at most %d)\n", val,
                        (int)(sizeof sets / sizeof sets[0]));
                return 2;
            }
            sets[nsets++] = val;
        } else {
            fprintf(stderr, PROG " validate: unknown option '%s' (see --help)\n", a);
            return 2;
        }
    }
    device dv;
    int rc = open_device(&dv, fake, replay, record, "validate", argc, argv);
    if (rc) return rc;
    if (!dv.preset) {
        fprintf(stderr, PROG " validate: no emu preset for compute capability %d.%d\n", dv.cc / 10, dv.cc % 10);
        return 2;
    }

    gpu_kind_result *res = calloc(GPU_KIND_COUNT, sizeof *res);
    if (!res) return 2;
    int n = 0, failed = 0;
    uint64_t mismatches = 0;
    for (int i = 0; i < GPU_KIND_COUNT; i++) {
        const gpu_kind *k = gpu_kind_get(i);
        gpu_kind_result *r = &res[n];
        gpu_reference ref;
        char err[512];
        if (any_sel && !sel[i]) continue;
        n++;
        r->kind = k;
        if (!kind_runs(&dv, k, r->image, sizeof r->image, r->skipped, sizeof r->skipped)) continue;
        if (failed && dv.replay) { /* the recording's calls are out of step from here on */
            snprintf(r->skipped, sizeof r->skipped, "not run: the replay stopped at an earlier kind");
            continue;
        }
        if (gpu_reference_init(&ref, k, dv.preset, dv.cc, err, sizeof err)) {
            snprintf(r->skipped, sizeof r->skipped, "no model: %.180s", err);
            continue;
        }
        for (int j = 0; j < nsets; j++) {
            char key[64];
            const char *eq = strchr(sets[j], '=');
            snprintf(key, sizeof key, "%.*s", (int)(eq - sets[j]), sets[j]);
            if (gpu_reference_set(&ref, key, eq + 1, err, sizeof err)) {
                fprintf(stderr, PROG " validate: %s: %s\n", k->name, err);
                return 2;
            }
        }
        if (gpu_validate_kind(&dv.be, &ref, &o, r, err, sizeof err)) {
            fprintf(stderr, PROG " validate: %s: %s\n", k->name, err);
            snprintf(r->skipped, sizeof r->skipped, "failed: %.150s", err);
            failed = 1;
            continue;
        }
        mismatches += r->total.mismatches;
        fprintf(stderr, "instruction=%s cases=%llu mismatches=%llu\n", k->name,
                (unsigned long long)r->total.cases, (unsigned long long)r->total.mismatches);
    }

    if (finish_record(&dv, "validate", failed)) failed = 1;
    gpu_report_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.device, sizeof info.device, "%s", dv.rt.name);
    snprintf(info.uuid, sizeof info.uuid, "%s", dv.rt.uuid);
    info.cc = dv.cc;
    info.driver_version = dv.rt.driver_version;
    info.runtime_version = dv.runtime_version;
    snprintf(info.backend, sizeof info.backend, "%s", dv.be.name);
    snprintf(info.preset, sizeof info.preset, "%s", dv.preset);
    utc_now(info.date, sizeof info.date);
    info.seed = o.seed;
    info.cases = o.cases;
    command_line(argc, argv, info.command, sizeof info.command);

    char *buf = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&buf, &len);
    if (!mf || gpu_report_write(mf, &info, res, n) || fclose(mf)) {
        fprintf(stderr, PROG " validate: cannot format the report\n");
        return 2;
    }
    for (int i = 0; i < n; i++) gpu_kind_result_free(&res[i]);
    free(res);
    if (to_stdout) {
        if (fwrite(buf, 1, len, stdout) != len || fflush(stdout) != 0) {
            fprintf(stderr, PROG " validate: --stdout: cannot write standard output: %s\n", strerror(errno));
            stdout_reported = 1;
            free(buf);
            return 2;
        }
    } else {
        char name[300], path[4400], err[512];
        gpu_report_filename(&info, name, sizeof name);
        if (mkdirs(out_dir)) {
            fprintf(stderr, PROG " validate: --out '%s': cannot create the folder: %s\n", out_dir, strerror(errno));
            free(buf);
            return 2;
        }
        snprintf(path, sizeof path, "%s/%s", out_dir, name);
        if (gpu_write_file_atomic(path, buf, len, err, sizeof err)) {
            fprintf(stderr, PROG " validate: %s\n", err);
            free(buf);
            return 2;
        }
        printf("%s\n", path);
    }
    free(buf);
    if (failed) return 2;
    return mismatches ? 1 : 0;
}

/* ---- probe -------------------------------------------------------------------------- */

/* The key=value lines of two formatted probe results that differ, among
 * the parameters a preset determines (those fpemu_mma_probe_match compares). */
static int probe_differs(const char *got, const char *want, char *diff, size_t len) {
    static const char *const keys[] = {"block=", "nfrac=", "align_round=", "out_round=", "out_mant=",
                                       "normalize=", "subnormals="};
    size_t pos = 0;
    int nd = 0;
    diff[0] = 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *g = strstr(got, keys[i]), *w = strstr(want, keys[i]);
        if (!g || !w) continue;
        size_t lg = strcspn(g, "\n"), lw = strcspn(w, "\n");
        if (lg != lw || strncmp(g, w, lg)) {
            int m = snprintf(diff + pos, len > pos ? len - pos : 0, "%s%.*s (preset %.*s)", nd ? ", " : "", (int)lg, g,
                             (int)(lw - strlen(keys[i])), w + strlen(keys[i]));
            if (m > 0) pos += (size_t)m;
            if (pos >= len) pos = len - 1;
            nd++;
        }
    }
    return nd;
}

static int cmd_probe(int argc, char **argv) {
    const char *fake = NULL, *record = NULL, *replay = NULL;
    int sel[GPU_KIND_COUNT] = {0}, any_sel = 0;
    unsigned long long kmax = 64;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf("usage: " PROG " probe [--kind NAME]... [--kmax N] [--fake PRESET] [--record FILE | --replay FILE]\n");
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, PROG " probe: unknown option '%s' or missing value (see --help)\n", a);
            return 2;
        }
        const char *val = argv[++i];
        if (!strcmp(a, "--kind")) {
            if (select_kind("probe", val, sel)) return 2;
            any_sel = 1;
        } else if (!strcmp(a, "--kmax")) {
            if (parse_u64("probe", a, val, 512, &kmax)) return 2;
            if (kmax < 8) {
                fprintf(stderr, PROG " probe: --kmax %llu: expected at least 8\n", kmax);
                return 2;
            }
        } else if (!strcmp(a, "--fake")) {
            fake = val;
        } else if (!strcmp(a, "--record")) {
            record = val;
        } else if (!strcmp(a, "--replay")) {
            replay = val;
        } else {
            fprintf(stderr, PROG " probe: unknown option '%s' (see --help)\n", a);
            return 2;
        }
    }
    device dv;
    int rc = open_device(&dv, fake, replay, record, "probe", argc, argv);
    if (rc) return rc;
    printf("device: %s, compute capability %d.%d, emu preset %s\n", dv.rt.name, dv.cc / 10, dv.cc % 10,
           dv.preset ? dv.preset : "none");
    int failed = 0;
    for (int i = 0; i < GPU_KIND_COUNT; i++) {
        const gpu_kind *k = gpu_kind_get(i);
        char image[64], why[256], err[512], got[2048], want[2048], diff[1024];
        gpu_reference ref;
        gpu_fmts f;
        if (any_sel ? !sel[i] : (k->op == GPU_OP_CVT || gpu_kind_is_int(k))) continue;
        if (k->op == GPU_OP_CVT || gpu_kind_is_int(k)) {
            printf("\n== %s: the probe is for floating-point MMA only\n", k->name);
            continue;
        }
        if (!kind_runs(&dv, k, image, sizeof image, why, sizeof why)) {
            printf("\n== %s: not run: %s\n", k->name, why);
            continue;
        }
        if (gpu_kind_formats(k, &f, err, sizeof err)) {
            printf("\n== %s: %s\n", k->name, err);
            continue;
        }
        int steps = (int)((kmax + (unsigned)k->k - 1) / (unsigned)k->k);
        if (steps > GPU_MAX_STEPS) steps = GPU_MAX_STEPS;
        gpu_probe_box box = {&dv.be, k, steps, 0, {0}};
        fpemu_mma_probe_result pr;
        printf("\n== %s (kernel %s, image %s)\n", k->name, k->kernel, image);
        printf("vectors in row 0 of A / column 0 of B; k <= %d runs one instruction, longer k chains up to %d "
               "instructions (each instruction's f32 output is the next one's C), so a block boundary at K=%d is "
               "the chaining\n", k->k, steps, k->k);
        if (fpemu_mma_probe(gpu_probe_blackbox, &box, f.a, f.b, f.c, f.d, (int)kmax, &pr)) {
            printf("probe failed after %d queries%s%s\n", box.calls, *box.err ? ": " : "", box.err);
            failed = 1;
            continue;
        }
        fpemu_mma_probe_format(&pr, got, sizeof got);
        printf("%s", got);
        if (got[0] && got[strlen(got) - 1] != '\n') printf("\n");
        if (dv.preset && !gpu_reference_init(&ref, k, dv.preset, dv.cc, err, sizeof err)) {
            if (ref.fp8_via_f16) {
                printf("expected: no preset models this path (sm_90 lowers fp8 mma.sync to two f16 HMMA and an "
                       "f32 add; `validate` checks that composition)\n");
            } else {
                fpemu_mma_probe_result ex;
                fpemu_mma_probe_expected(&ref.model, (int)kmax, &ex);
                fpemu_mma_probe_format(&ex, want, sizeof want);
                if (probe_differs(got, want, diff, sizeof diff))
                    printf("verdict: differs from preset %s: %s\n", dv.preset, diff);
                else
                    printf("verdict: agrees with preset %s\n", dv.preset);
            }
        }
    }
    if (finish_record(&dv, "probe", failed)) failed = 1;
    return failed ? 2 : 0;
}

/* ---- main ----------------------------------------------------------------------------- */

static void usage(FILE *f) {
    fprintf(f, "usage: " PROG " COMMAND [ARGS...]\n\ncommands:\n"
               "  info       device, compute capability, driver and runtime versions, kernels that apply\n"
               "  validate   run every kernel, compare every output bit with the emu preset, write a report\n"
               "  probe      infer the tensor cores' accumulation parameters with emu's MMA probe\n"
               "  kinds      the kernel table: kernel, target, expected SASS instruction, PTX kind\n");
}

/* Every command ends here: standard output is flushed and closed, and a
 * write that failed on it (its error flag keeps every failed write: a full
 * disk, /dev/full, a closed descriptor) turns the status into 2 with a
 * message, whatever the command returned. */
static int stdout_done(const char *sub, int rc) {
    errno = 0;
    int bad = fflush(stdout) != 0, e = errno;
    if (ferror(stdout)) bad = 1;
    if (fclose(stdout) != 0) {
        if (!bad) e = errno;
        bad = 1;
    }
    if (!bad) return rc;
    if (!stdout_reported)
        fprintf(stderr, PROG "%s%s: cannot write standard output%s%s\n", *sub ? " " : "", sub, e ? ": " : "",
                e ? strerror(e) : "");
    return 2;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return stdout_done("", 0);
    }
    if (!strcmp(argv[1], "info")) return stdout_done("info", cmd_info(argc - 1, argv + 1));
    if (!strcmp(argv[1], "validate")) return stdout_done("validate", cmd_validate(argc - 1, argv + 1));
    if (!strcmp(argv[1], "probe")) return stdout_done("probe", cmd_probe(argc - 1, argv + 1));
    if (!strcmp(argv[1], "kinds")) return stdout_done("kinds", cmd_kinds(argc - 1, argv + 1));
    fprintf(stderr, PROG ": unknown command '%s' (expected info, validate, probe, kinds)\n", argv[1]);
    return 2;
}
