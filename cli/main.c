/* SPDX-License-Identifier: MIT */
/* main.c: bin/fpemu, git-style subcommands. */
#include <stdio.h>
#include <string.h>
#include "cli.h"

typedef struct { const char *name; int (*fn)(int, char **); const char *summary; } command;

static const command commands[] = {
    {"formats", cmd_formats, "list the formats, or describe one"},
    {"run", cmd_run, "compute TestFloat-style vector lines (operands in, complete lines out)"},
    {"verify", cmd_verify, "check complete vector lines; exit 1 on any mismatch"},
    {"check", cmd_check, "differential check of the emulator against the MPFR reference"},
    {"train", cmd_train, "train a model under a precision policy (metrics, telemetry, checkpoints)"},
    {"report", cmd_report, "plots, HTML/Markdown report and verdicts from training runs"},
    {"drift", cmd_drift, "numeric regression gate: compare results with a baseline (exit 1 on drift)"},
    {"mma", cmd_mma, "tensor-core dot products: lines `C A0 B0 A1 B1 ...` in, D appended"},
    {"probe", cmd_probe, "infer a tensor-core model's parameters with the black-box probe"},
    {"gemm", cmd_gemm, "D = A x B (+ C) from .npy files under an MMA model and scaling recipe"},
    {"cast", cmd_cast, "cast a tensor (.npy) or a checkpoint (safetensors) to a format, with a scaling recipe; error figures"},
    {"errk", cmd_errk, "tensor-core accumulation error against K (CSV for the errk report section)"},
    {"compare", cmd_compare, "a run against a trace of a real PyTorch run, step by step (exit 1 on a difference)"},
    /* more subcommands register here */
};

static void usage(FILE *out) {
    fprintf(out, "usage: fpemu COMMAND [ARGS...]   (fpemu COMMAND --help for details)\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
}

/* Every command ends with cli_stdout_done: whatever it printed (a table, its
 * --help, the version) must have reached standard output, or the exit
 * status is 2 with a message; a full disk or a closed pipe never reads as
 * success. */
int main(int argc, char **argv) {
    if (argc < 2) { usage(stderr); return 2; }
    if (cli_is_help(argv[1]) || !strcmp(argv[1], "help")) { usage(stdout); return cli_stdout_done("help", 0); }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("fpemu %s\n", FPEMU_VERSION);
        return cli_stdout_done("--version", 0);
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return cli_stdout_done(commands[i].name, commands[i].fn(argc - 1, argv + 1));
    fprintf(stderr, "fpemu: unknown command '%s' (expected one of:", argv[1]);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) fprintf(stderr, " %s", commands[i].name);
    fprintf(stderr, ")\n");
    return 2;
}
