/* tcc_gen.c - the tcc-gen command: plan.yaml -> IR -> passes -> assembly.
 *
 * Exit codes: 0 = written, 2 = bad input (YAML, plan semantics, a plan that
 * does not fit the machine) or an I/O error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

static gboolean pick_problem(const Plan *plan, const char *name, ProblemKind *kind, GError **err) {
  if (name) {
    if (strcmp(name, "p1") && strcmp(name, "d1")) {
      g_set_error(err, IR_ERROR, 1, "tcc-gen: error: --problem must be p1 or d1, got '%s'", name);
      return FALSE;
    }
    *kind = strcmp(name, "p1") == 0 ? PROB_P1 : PROB_D1;
    return TRUE;
  }
  gboolean p1 = plan_problem(plan, PROB_P1)->present, d1 = plan_problem(plan, PROB_D1)->present;
  if (p1 == d1) {
    g_set_error(err, IR_ERROR, 1, "%s: error: %s; choose one with --problem p1|d1", plan->file,
                p1 ? "the plan has both p1 and d1 sections" : "the plan has no p1 or d1 section");
    return FALSE;
  }
  *kind = p1 ? PROB_P1 : PROB_D1;
  return TRUE;
}

int main(int argc, char **argv) {
  g_autofree char *out = NULL, *problem = NULL, *emit = NULL, *dump_after = NULL;
  gboolean version = FALSE;
  GOptionEntry entries[] = {
      {"output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "write to FILE (default: standard output)", "FILE"},
      {"problem", 0, 0, G_OPTION_ARG_STRING, &problem, "p1 or d1 (default: the plan's only section)", "P"},
      {"emit", 0, 0, G_OPTION_ARG_STRING, &emit, "what to write: asm (default) or ir", "KIND"},
      {"dump-after", 0, 0, G_OPTION_ARG_STRING, &dump_after,
       "write the IR after PASS (lower, place, pace, rf_alloc) instead", "PASS"},
      {"version", 0, 0, G_OPTION_ARG_NONE, &version, "print the version", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  g_autoptr(GOptionContext) ctx = g_option_context_new("PLAN.yaml - compile a plan to TCC assembly");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_summary(ctx, "Lowers a plan (docs/plan.md) through the IR and its passes to\n"
                                    "assembly for tcc-sim (docs/machine.md).\n"
                                    "Exit: 0 written, 2 bad input or a plan that does not fit.");
  g_autoptr(GError) err = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    fprintf(stderr, "tcc-gen: error: %s\n", err->message);
    return 2;
  }
  if (version) {
    printf("tcc-gen 0.1.0 (plan v1, spec v%d)\n", TCC_SPEC_VERSION);
    return 0;
  }
  if (argc != 2) {
    fprintf(stderr, "tcc-gen: error: expected one plan file (see --help)\n");
    return 2;
  }
  if (emit && strcmp(emit, "asm") && strcmp(emit, "ir")) {
    fprintf(stderr, "tcc-gen: error: --emit must be asm or ir, got '%s'\n", emit);
    return 2;
  }
  if (dump_after) {
    gboolean known = FALSE;
    for (int i = 0; pass_names[i]; i++) known |= strcmp(pass_names[i], dump_after) == 0;
    if (!known) {
      fprintf(stderr, "tcc-gen: error: --dump-after: unknown pass '%s' (passes: lower, place, pace, rf_alloc)\n",
              dump_after);
      return 2;
    }
  }
  g_autoptr(Plan) plan = plan_load(argv[1], &err);
  ProblemKind kind;
  if (!plan || !pick_problem(plan, problem, &kind, &err)) {
    fprintf(stderr, "%s\n", err->message);
    return 2;
  }
  g_autofree char *dump = NULL;
  g_autoptr(Ir) ir = pass_pipeline(plan, kind, dump_after, &dump, &err);
  if (!ir) { /* a dump taken before the failing pass is still written */
    if (dump) fputs(dump, stdout);
    fprintf(stderr, "%s\n", err->message);
    return 2;
  }
  g_autofree char *text = dump ? g_steal_pointer(&dump)
                         : emit && strcmp(emit, "ir") == 0 ? ir_print(ir) : be_emit(ir);
  if (!out || strcmp(out, "-") == 0) {
    fputs(text, stdout);
  } else if (!g_file_set_contents(out, text, -1, &err)) {
    fprintf(stderr, "tcc-gen: error: %s\n", err->message);
    return 2;
  }
  return 0;
}
