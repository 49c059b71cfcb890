/* SPDX-License-Identifier: MIT */
/* outfile.h: the one output-file writer of bin/fpemu (cli/util.c's
 * cli_atomic_*) and bin/fpemu-gpu (harness.c's gpu_write_file_atomic),
 * header-only so that both programs compile the same code without linking
 * each other's libraries. Plain POSIX C; it never prints or exits.
 *
 * The rule (docs/hardening.md, "Output files and inputs"):
 *   - a new path, or an existing regular file: the content goes to
 *     PATH.tmp.PID in the same folder (created exclusively, never through a
 *     link), is flushed and fsync'ed, then renamed over PATH: the file
 *     appears whole or not at all, and a failure removes the temporary. A
 *     replaced regular file keeps its permission bits;
 *   - a symbolic link is followed, never replaced: its target (link after
 *     link, at most 40, relative targets resolved from the link's folder)
 *     is written under this same rule, atomically in the target's folder;
 *     a dangling link's target is created, as the shell's '>' would;
 *   - a device, FIFO or socket is written directly (opened without O_CREAT
 *     or O_TRUNC), never replaced: a write error is reported, and nothing
 *     can be taken back there;
 *   - a directory is refused (EISDIR).
 * A program that writes several files as one result stages each
 * (fpemu_out_stage: complete and fsync'ed beside its target) and commits
 * them only when every one is staged, or aborts them all: a failure before
 * the commits leaves every target as it was.
 * Between the look and the rename another process may change the path; that
 * race is not guarded (no privilege boundary is crossed here). */
#ifndef FPEMU_OUTFILE_H
#define FPEMU_OUTFILE_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct fpemu_out {
    FILE *f;         /* write here, between open and close */
    int direct;      /* 1: the target (a device, FIFO, socket) is written in place */
    int staged;      /* 1: closed and complete, waiting for commit or abort */
    char path[4096]; /* the file written: PATH, or the target a link leads to */
    char tmp[4200];  /* PATH.tmp.PID ("" when direct) */
} fpemu_out;

/* Follow links from PATH to the name that is not a link (it may not exist):
 * into out (len bytes); *st and *exists describe it. 0, or -1 with errno. */
static inline int fpemu_out_resolve(const char *path, char *out, size_t len, struct stat *st, int *exists) {
    char link[4096], next[8192];
    if (strlen(path) >= len) { errno = ENAMETOOLONG; return -1; }
    strcpy(out, path);
    for (int hops = 0;; hops++) {
        if (lstat(out, st) != 0) {
            if (errno != ENOENT) return -1;
            *exists = 0;
            return 0;
        }
        if (!S_ISLNK(st->st_mode)) {
            *exists = 1;
            return 0;
        }
        if (hops == 40) { errno = ELOOP; return -1; }
        ssize_t n = readlink(out, link, sizeof link - 1);
        if (n < 0) return -1;
        if (n == 0) { errno = ENOENT; return -1; }
        link[n] = 0;
        if (link[0] == '/') {
            snprintf(next, sizeof next, "%s", link);
        } else { /* relative to the folder holding the link */
            const char *slash = strrchr(out, '/');
            if (!slash) snprintf(next, sizeof next, "%s", link);
            else if (slash == out) snprintf(next, sizeof next, "/%s", link);
            else snprintf(next, sizeof next, "%.*s/%s", (int)(slash - out), out, link);
        }
        if (strlen(next) >= len) { errno = ENAMETOOLONG; return -1; }
        strcpy(out, next);
    }
}

/* Open PATH for writing under the rule above; mode is fopen's ("w", "wb").
 * 0, or -1 with errno (nothing created). */
static inline int fpemu_out_open(fpemu_out *o, const char *path, const char *mode) {
    struct stat st;
    int exists = 0, fd = -1;
    memset(o, 0, sizeof *o);
    if (!path || !*path) { errno = ENOENT; return -1; }
    if (fpemu_out_resolve(path, o->path, sizeof o->path, &st, &exists)) return -1;
    if (exists && S_ISDIR(st.st_mode)) { errno = EISDIR; return -1; }
    if (exists && !S_ISREG(st.st_mode)) {
        /* a device, FIFO or socket: write it where it is (a socket gives ENXIO) */
        fd = open(o->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) return -1;
        struct stat now;
        if (fstat(fd, &now) != 0 || S_ISREG(now.st_mode) || S_ISDIR(now.st_mode)) {
            /* it changed under us: never write a regular file in place */
            close(fd);
            errno = EAGAIN;
            return -1;
        }
        o->direct = 1;
    } else {
        int n = snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", o->path, (long)getpid());
        if (n < 0 || (size_t)n >= sizeof o->tmp) { errno = ENAMETOOLONG; return -1; }
        int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
        fd = open(o->tmp, flags, 0666);
        if (fd < 0 && errno == EEXIST) { /* left by an earlier process with this PID: ours by name */
            struct stat t;
            if (lstat(o->tmp, &t) == 0 && !S_ISDIR(t.st_mode) && unlink(o->tmp) == 0) fd = open(o->tmp, flags, 0666);
            else errno = EEXIST;
        }
        if (fd < 0) { o->tmp[0] = 0; return -1; }
        if (exists) (void)fchmod(fd, st.st_mode & 0777); /* a replaced file keeps its mode */
    }
    o->f = fdopen(fd, mode);
    if (!o->f) {
        int e = errno;
        close(fd);
        if (!o->direct) unlink(o->tmp);
        errno = e;
        return -1;
    }
    return 0;
}

/* Stage: the content complete on disk, not yet in place. ok and every
 * write succeeded -> flushed, fsync'ed and closed, the temporary kept for
 * fpemu_out_commit or fpemu_out_abort (0); else the temporary is removed
 * (a direct target keeps what reached it) and -1 with errno (the first
 * error; with ok == 0, errno as it was). */
static inline int fpemu_out_stage(fpemu_out *o, int ok) {
    int e = ok ? 0 : errno, bad = !ok;
    if (!o->f) { errno = EBADF; return -1; }
#define FPEMU_OUT_FAIL() do { if (!bad) e = errno; bad = 1; } while (0)
    if (fflush(o->f) != 0) FPEMU_OUT_FAIL();
    if (ferror(o->f) && !bad) { e = errno ? errno : EIO; bad = 1; }
    if (!bad && !o->direct && fsync(fileno(o->f)) != 0) FPEMU_OUT_FAIL();
    if (fclose(o->f) != 0) FPEMU_OUT_FAIL();
#undef FPEMU_OUT_FAIL
    o->f = NULL;
    if (!bad) { o->staged = 1; return 0; }
    if (!o->direct) unlink(o->tmp);
    errno = e ? e : EIO;
    return -1;
}

/* A staged file into place: the rename over PATH (nothing to do for a
 * direct target). 0, or -1 with errno (the temporary removed). */
static inline int fpemu_out_commit(fpemu_out *o) {
    if (!o->staged) { errno = EBADF; return -1; }
    o->staged = 0;
    if (o->direct || rename(o->tmp, o->path) == 0) return 0;
    int e = errno;
    unlink(o->tmp);
    errno = e;
    return -1;
}

/* A staged file given up: its temporary removed, PATH as it was (a direct
 * target keeps what reached it). Safe to call on one not staged. */
static inline void fpemu_out_abort(fpemu_out *o) {
    if (o->staged && !o->direct) unlink(o->tmp);
    o->staged = 0;
}

/* Finish one file: stage, then commit. 0, or -1 with errno. */
static inline int fpemu_out_close(fpemu_out *o, int ok) {
    if (fpemu_out_stage(o, ok)) return -1;
    return fpemu_out_commit(o);
}

/* The whole of data into PATH under the rule. 0, or -1 with errno. */
static inline int fpemu_out_write_file(const char *path, const void *data, size_t len) {
    fpemu_out o;
    if (fpemu_out_open(&o, path, "wb")) return -1;
    int ok = fwrite(data, 1, len, o.f) == len;
    return fpemu_out_close(&o, ok);
}

#endif
