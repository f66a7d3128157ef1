/* pipeline.c - plan -> IR: the schedule record, then the passes of
 * pass_table in order (pipeline.h). */
#include "pipeline.h"

#include <string.h>

#include "lower.h"

const PassDef pass_table[] = {
    {"lower", "the problem's strategy -> tasks, tensors, ops, events", pass_lower},
    {"kv_writeback", "direct K/V write-back: each K/V piece's round trip through scratch (store, fence, load back) forwarded to its final store (kv_writeback: direct)", pass_kv_writeback},
    {"defer", "deferred preload: layer l's preload tasks after step 0's given stage of layer l-1 (power.deferred_after)", pass_defer},
    {"waves", "preload waves: the preload tasks wait for earlier waves (power.preload_waves)", pass_waves},
    {"preload_window", "preload window: each preload task waits until all but K-1 earlier ones completed (power.preload_window)", pass_preload_window},
    {"forward", "handoff forward: a store of a window to a later consumer moved to an earlier consumer holding it (handoff_forward)", pass_forward},
    {"sync", "events, SIG and WAIT from the tasks' dependencies", pass_sync},
    {"pacer", "the pacing WG's task, when power.pacing_wg paces the buckets", pass_pacer},
    {"place", "bind tasks to WGs (the pacer to power.pacing_wg)", pass_place},
    {"multicast", "merge candidate loads of one HBM window by several WGs into LD.mc (multicast.pass)", pass_multicast},
    {"pace", "byte-bucket load pacing per WG, or by the pacer (power knobs)", pass_pace},
    {"rf_alloc", "partitions and offsets for every RF tensor", pass_rf_alloc},
    {NULL, NULL, NULL},
};

Ir *pass_pipeline(const Plan *plan, ProblemKind kind, const char *dump_after, char **out,
                  gboolean verify, GError **err) {
  return pass_pipeline_section(plan, plan_problem(plan, kind), dump_after, out, verify, err);
}

/* Does the dump spec (pipeline.h) name pass `name`? */
static gboolean dumps(const char *spec, const char *name) {
  if (g_str_has_prefix(spec, "changed:")) spec += strlen("changed:");
  if (strcmp(spec, "all") == 0) return TRUE;
  size_t n = strlen(name);
  for (const char *p = spec; p; p = strchr(p, ',')) {
    if (*p == ',') p++;
    if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\0')) return TRUE;
  }
  return FALSE;
}

Ir *pass_pipeline_section(const Plan *plan, const PlanProblem *pp, const char *dump_after, char **out,
                          gboolean verify, GError **err) {
  ProblemKind kind = pp->dims.kind;
  g_autoptr(Ir) ir = ir_new(&plan->hw, &pp->dims, plan->file);
  ir_set_schedule(ir, pp);
  if (!pp->present) {
    ir_error(ir, err, ir->section, "the plan has no %s section", wl_problem_name(kind));
    return NULL;
  }
  gboolean allocated = FALSE; /* rf_alloc has run: verify its results too */
  gboolean want = dump_after && out && !*out, changed_only = want && g_str_has_prefix(dump_after, "changed:");
  g_autoptr(GString) dump = want ? g_string_new(NULL) : NULL;
  g_autofree char *last = NULL; /* --print-changed: the IR as last printed */
  for (const PassDef *p = pass_table; p->name; p++) {
    /* the passes' messages are ir_error's, with the plan's place */
    if (!p->run(ir, err)) {
      if (dump && dump->len) *out = g_string_free(g_steal_pointer(&dump), FALSE); /* the dumps before it */
      return NULL;
    }
    allocated |= p->run == pass_rf_alloc;
    g_autoptr(GError) bad = NULL;
    if (verify && !ir_verify(ir, allocated, &bad)) {
      ir_error(ir, err, ir->section, "internal: the IR after pass %s is invalid: %s", p->name,
               bad->message);
      return NULL;
    }
    if (dump && dumps(dump_after, p->name)) {
      g_autofree char *text = ir_print(ir);
      if (changed_only && last && strcmp(text, last) == 0) {
        g_string_append_printf(dump, "; *** IR after %s: unchanged ***\n", p->name);
      } else {
        g_string_append_printf(dump, "; *** IR after %s ***\n%s", p->name, text);
        if (changed_only) g_free(last), last = g_steal_pointer(&text);
      }
    }
  }
  if (dump && dump->len) *out = g_string_free(g_steal_pointer(&dump), FALSE);
  /* always, however the passes ran: a program with a WAIT that can never
   * pass is the compiler's bug, refused here rather than left for tcc-sim
   * to find as a deadlock */
  g_autoptr(GError) bad = NULL;
  if (!ir_verify_progress(ir, &bad)) {
    ir_error(ir, err, ir->section, "internal: the program would deadlock: %s", bad->message);
    return NULL;
  }
  return g_steal_pointer(&ir);
}
