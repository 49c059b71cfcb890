/* SPDX-License-Identifier: MIT */
/* util.c: helpers shared by the subcommands. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

void cli_html_esc(FILE *f, const char *s) {
    for (; s && *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

int cli_has_suffix(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

char *cli_json_quote(const char *s) {
    size_t n = 3;
    for (const char *t = s; *t; t++) n += (unsigned char)*t < 0x20 ? 6 : *t == '"' || *t == '\\' ? 2 : 1;
    char *q = malloc(n), *o = q;
    if (!q) return NULL;
    *o++ = '"';
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') *o++ = '\\', *o++ = *s;
        else if ((unsigned char)*s < 0x20) o += sprintf(o, "\\u%04x", (unsigned char)*s);
        else *o++ = *s;
    }
    *o++ = '"';
    *o = 0;
    return q;
}

int cli_json_str(FILE *f, const char *s) {
    char *q = cli_json_quote(s);
    int rc = q && fputs(q, f) >= 0 ? 0 : -1;
    free(q);
    return rc;
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

uint64_t cli_code_max(const fpemu_format *f) {
    int w = f->bits + f->pad;
    return w >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << w) - 1;
}

int cli_parse_hex(const char *s, size_t len, int digits, uint64_t max, uint64_t *v) {
    if (len == 0 || len > (size_t)digits) return -1;
    uint64_t x = 0;
    for (size_t i = 0; i < len; i++) {
        int c = s[i], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return -1;
        x = x << 4 | (uint64_t)d;
    }
    if (x > max) return -2;
    *v = x;
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

/* The writer is gpu/host/outfile.h's, shared with bin/fpemu-gpu: see cli.h. */
int cli_atomic_open(cli_atomic *a, const char *path, const char *mode) { return fpemu_out_open(a, path, mode); }

int cli_atomic_close(cli_atomic *a, int ok) { return fpemu_out_close(a, ok); }

int cli_stdout_done(const char *sub, int rc) {
    errno = 0;
    int bad = fflush(stdout) != 0;
    int e = errno;
    if (ferror(stdout)) bad = 1;
    if (!bad) return rc;
    clearerr(stdout);
    if (e) return cli_error(sub, "cannot write standard output: %s", strerror(e));
    return cli_error(sub, "cannot write standard output");
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

int cli_gnuplot(const char *dir, const char *errlog, const char *vars, const char *script, const volatile sig_atomic_t *stop) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return 0x7f00;
    if (pid == 0) {
        if (errlog && !freopen(errlog, "w", stderr)) _exit(126); /* (a path from the caller's folder) */
        if (dir && chdir(dir)) _exit(126);
        if (!freopen("/dev/null", "w", stdout)) _exit(126);
        if (vars) execlp("gnuplot", "gnuplot", "-e", vars, script, (char *)NULL);
        else execlp("gnuplot", "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    int st = 0, killed = 0;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) return 0x7f00;
        if (stop && *stop && !killed) { kill(pid, SIGTERM); killed = 1; } /* the caller is stopping: so does gnuplot */
    }
    return st;
}

int cli_image_done(const char *path, int png) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    unsigned char b[16];
    size_t n = 0;
    if (fseek(f, -(long)sizeof b, SEEK_END) == 0) n = fread(b, 1, sizeof b, f);
    int ok = n == sizeof b;
    if (ok && png) ok = !memcmp(b + 8, "IEND\xae\x42\x60\x82", 8);
    else if (ok) {
        size_t e = n;
        while (e && (b[e - 1] == '\n' || b[e - 1] == '\r' || b[e - 1] == ' ')) e--;
        ok = e >= 6 && !memcmp(b + e - 6, "</svg>", 6);
    }
    ok = ok && fsync(fileno(f)) == 0;
    fclose(f);
    return ok;
}
