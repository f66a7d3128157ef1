/* stages.c - where each stage of a program spent its cycles (tcc-sim
 * --profile, docs/tools.md "Per-stage cycles").  The stage of an
 * instruction is hot_groups.c's: the task in its comment up to the first
 * part that is not a step or layer number.  A WG's time between two issues
 * is charged to the instruction it led to (or to the WAITT before it):
 * with the stage spans and their energy, a user sees which stage is long,
 * and whether its WGs waited for events, were paced by the plan, or
 * stalled on operands and units.  An END without a task (tcc-gen writes
 * none) counts with the instruction before it. */
#include <string.h>

#include "sim.h"

static int64_t mma_blocks(const Program *p, const Insn *in) {
  const RfRef *d = sim_ref(p, in->d), *a = sim_ref(p, in->a);
  return ((int64_t)(d->rows + 31) / 32) * ((d->cols + 31) / 32) * ((a->cols + 31) / 32);
}

/* By start, ties by name: a fixed order. */
static int stage_cmp(const void *x, const void *y) {
  const SimStage *a = x, *b = y;
  if (a->start != b->start) return a->start < b->start ? -1 : 1;
  return strcmp(a->name, b->name);
}

SimStage *sim_stages(const Program *p, const SimInsnRecords *rec, int *nstages) {
  const int *insn_base = rec->insn_base;
  const int64_t *issue = rec->issue, *end = rec->end;
  GArray *st = g_array_new(FALSE, TRUE, sizeof(SimStage));
  GArray *last_wg = g_array_new(FALSE, FALSE, sizeof(int));
  g_autoptr(GHashTable) at = g_hash_table_new(g_str_hash, g_str_equal); /* name -> index + 1 */
  for (int w = 0; w < p->nwgs; w++) {
    const WgCode *c = &p->wgs[w];
    int64_t prev = -1;
    int prev_stage = -1;
    gboolean prev_waitt = FALSE;
    for (int pc = 0; pc < c->n; pc++) {
      int k = insn_base[w] + pc;
      if (issue[k] < 0) break; /* not reached (a run cut short) */
      const Insn *in = &c->insns[pc];
      char *key = sim_hot_key(sim_insn_text(p, in), HOT_BY_STAGE);
      guint i = GPOINTER_TO_UINT(g_hash_table_lookup(at, key));
      if (in->op == OP_END && prev_stage >= 0 && !strcmp(key, "(none)")) { /* an END with no task: its WG's last */
        g_free(key);
        i = (guint)prev_stage + 1;
      } else if (!i) {
        SimStage s = {.name = key, .start = issue[k], .end = issue[k] + 1};
        int none = -1;
        g_array_append_val(st, s);
        g_array_append_val(last_wg, none);
        i = st->len;
        g_hash_table_insert(at, key, GUINT_TO_POINTER(i));
      } else {
        g_free(key);
      }
      SimStage *s = &g_array_index(st, SimStage, i - 1);
      int *lw = &g_array_index(last_wg, int, i - 1);
      if (*lw != w) {
        *lw = w;
        s->wgs++;
      }
      s->start = MIN(s->start, issue[k]);
      s->end = MAX(s->end, MAX(issue[k] + 1, end[k]));
      s->insns++;
      s->energy_pj += rec->energy_pj[k];
      s->hbm_lines += rec->hbm_lines[k];
      if (in->op == OP_MMA) s->mma_blocks += mma_blocks(p, in);
      int64_t gap = issue[k] - prev - 1;
      if (in->op == OP_WAIT)
        s->wait += gap;
      else if (prev_waitt)
        g_array_index(st, SimStage, prev_stage).pace += gap;
      else
        s->stall += gap;
      prev = issue[k];
      prev_stage = (int)i - 1;
      prev_waitt = in->op == OP_WAITT;
    }
  }
  g_array_free(last_wg, TRUE);
  g_array_sort(st, stage_cmp);
  *nstages = (int)st->len;
  return (SimStage *)g_array_free(st, FALSE);
}

void sim_stages_free(SimStage *st, int n) {
  for (int i = 0; i < n; i++) g_free(st[i].name);
  g_free(st);
}
