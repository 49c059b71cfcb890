/* SPDX-License-Identifier: MIT */
/* util.c: helpers shared by the subcommands. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

int cli_error(const char *sub, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fpemu %s: ", sub);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 2;
}

int cli_is_help(const char *s) { return !strcmp(s, "--help") || !strcmp(s, "-h"); }

int cli_parse_u64(const char *s, unsigned long long *out) {
    if (!s || !*s || *s == '-' || *s == '+') return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

int cli_parse_double(const char *s, double *out) {
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno == ERANGE && v != 0) return -1;
    if (*end) return -1;
    *out = v;
    return 0;
}

int cli_atomic_open(cli_atomic *a, const char *path, const char *mode) {
    if (strlen(path) >= sizeof a->path) { errno = ENAMETOOLONG; return -1; }
    strcpy(a->path, path);
    snprintf(a->tmp, sizeof a->tmp, "%s.tmp.%ld", path, (long)getpid());
    a->f = fopen(a->tmp, mode);
    return a->f ? 0 : -1;
}

int cli_atomic_close(cli_atomic *a, int ok) {
    int rc = 0;
    if (!a->f) return -1;
    if (fflush(a->f) != 0 || ferror(a->f)) ok = 0, rc = -1;
    if (ok && fsync(fileno(a->f)) != 0) ok = 0, rc = -1;
    if (fclose(a->f) != 0) ok = 0, rc = -1;
    a->f = NULL;
    if (ok && rename(a->tmp, a->path) != 0) rc = -1, ok = 0;
    if (!ok) { int e = errno; unlink(a->tmp); errno = e; }
    return ok ? 0 : (rc ? rc : -1);
}

int cli_atomic_clean(const char *dir, const char *const *names) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        for (int i = 0; names[i]; i++) {
            size_t l = strlen(names[i]);
            if (strncmp(e->d_name, names[i], l) || strncmp(e->d_name + l, ".tmp.", 5)) continue;
            const char *q = e->d_name + l + 5;
            char *end;
            errno = 0;
            long pid = strtol(q, &end, 10);
            if (q[0] < '1' || q[0] > '9' || *end || errno || pid <= 0 || (long)(pid_t)pid != pid) continue;
            /* a writer that is still running (this process, or another run
             * writing the same folder) keeps its file; EPERM: alive too */
            if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
            char p[4400];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            if (unlink(p) == 0) removed++;
        }
    }
    closedir(d);
    return removed;
}
