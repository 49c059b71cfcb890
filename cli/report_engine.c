/* SPDX-License-Identifier: MIT */
/* report_engine.c: what `fpemu report` knows of the training engine's
 * models and policies (report.h lists the parts). No model or policy name
 * is written here or anywhere else in the report: names come from the
 * engine's tables (trn_model_names[], trn_policy_names[], train.h) and a
 * policy's properties from its row in the engine (trn__policy_find,
 * experiments/policy.c), so a policy added to the engine is reported and
 * planned with no change here. This file owns:
 * - the reference policy: everything in f32 (the baseline of runs given on
 *   the command line) and the policy evaluated through int8 (a caption);
 * - how a policy scales its 8-bit GEMM inputs (the fp8 plots' captions);
 * - the planner's cost table: the one place the relative cost of a run is
 *   estimated (report_plan.c runs the costliest first). */
#include <string.h>
#include "report.h"
#include "train.h"
#include "train_internal.h"

/* ---- policies ----------------------------------------------------------------- */

static int is_f32(const char *f) { return f && !strcmp(f, "f32"); }

const char *rep_reference_policy(void) {
    for (int i = 0; trn_policy_names[i]; i++) {
        const pol_def *p = trn__policy_find(trn_policy_names[i]);
        if (p && p->recipe == RECIPE_NONE && is_f32(p->param) && is_f32(p->hi) && is_f32(p->lo) && is_f32(p->m_fmt) &&
            is_f32(p->v_fmt) && !p->gw_fmt && !p->sr_update && !p->int8_eval && !p->msamp)
            return trn_policy_names[i];
    }
    return trn_policy_names[0];
}

const char *rep_int8_eval_policy(void) {
    for (int i = 0; trn_policy_names[i]; i++) {
        const pol_def *p = trn__policy_find(trn_policy_names[i]);
        if (p && p->int8_eval) return trn_policy_names[i];
    }
    return "";
}

rep_scaling rep_policy_scaling(const char *policy) {
    const pol_def *p = trn__policy_find(policy);
    if (!p) return REP_SCALING_NONE;
    switch (p->recipe) {
    case RECIPE_DELAYED: return REP_SCALING_DELAYED;
    case RECIPE_CURRENT: return REP_SCALING_CURRENT;
    case RECIPE_NONE: return REP_SCALING_NONE;
    default: return REP_SCALING_FINE; /* per row, per block, MX */
    }
}

/* ---- the planner's cost table ------------------------------------------------- */

/* Relative cost of one step of each model, in the order of the engine's
 * trn_model_names[] (mlp-digits, tiny-transformer, deep-mlp; the engine's
 * trn_settings_init uses the same order for its per-model defaults). A model
 * beyond the table costs 1. A rough estimate: only the order of the plan
 * depends on it. */
static const double model_step_cost[] = {1, 40, 5};

static double model_cost(const char *model) {
    for (int i = 0; trn_model_names[i]; i++)
        if (!strcmp(model, trn_model_names[i]))
            return i < (int)(sizeof model_step_cost / sizeof model_step_cost[0]) ? model_step_cost[i] : 1;
    return 1;
}

/* Relative cost of a run's policy: f32/f64 GEMMs are native (0.1), low
 * precision goes through the emulator (1), scaled 8-bit GEMMs add the
 * recipe (1.5), exact accumulation (mma=exact) is slowest (20). */
static double policy_cost(const suite_run *r) {
    for (int j = 0; j < r->nsets; j++)
        if (!strcmp(r->sets[j], "mma=exact")) return 20;
    const pol_def *p = trn__policy_find(r->policy);
    if (!p) return 1;
    if (p->recipe == RECIPE_NONE && (!strcmp(p->lo, "f32") || !strcmp(p->lo, "f64"))) return 0.1;
    return p->recipe != RECIPE_NONE ? 1.5 : 1;
}

double rep_run_cost(const suite_exp *e, const suite_run *r) { return model_cost(e->model) * (double)e->steps * policy_cost(r); }
