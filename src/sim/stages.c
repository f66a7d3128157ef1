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

void sim_insn_stages(const Program *p, const SimInsnRecords *rec, SimInsnStages *out) {
  int total = rec->insn_base[p->nwgs]; /* nwgs + 1 entries */
  out->of = g_new(int, MAX(total, 1));
  out->names = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GHashTable) at = g_hash_table_new(g_str_hash, g_str_equal); /* name -> index + 1 */
  for (int w = 0; w < p->nwgs; w++) {
    const WgCode *c = &p->wgs[w];
    int prev_stage = -1;
    for (int pc = 0; pc < c->n; pc++) {
      int k = rec->insn_base[w] + pc;
      out->of[k] = -1;
      if (rec->issue[k] < 0) { /* not reached (a run cut short) */
        for (int q = pc + 1; q < c->n; q++) out->of[rec->insn_base[w] + q] = -1;
        break;
      }
      const Insn *in = &c->insns[pc];
      char *key = sim_hot_key(sim_insn_text(p, in), HOT_BY_STAGE);
      guint i = GPOINTER_TO_UINT(g_hash_table_lookup(at, key));
      if (in->op == OP_END && prev_stage >= 0 && !strcmp(key, "(none)")) { /* an END with no task: its WG's last */
        g_free(key);
        i = (guint)prev_stage + 1;
      } else if (!i) {
        g_ptr_array_add(out->names, key);
        i = out->names->len;
        g_hash_table_insert(at, key, GUINT_TO_POINTER(i));
      } else {
        g_free(key);
      }
      out->of[k] = prev_stage = (int)i - 1;
    }
  }
}

void sim_insn_stages_clear(SimInsnStages *is) {
  g_free(is->of);
  if (is->names) g_ptr_array_unref(is->names);
  memset(is, 0, sizeof *is);
}

SimStage *sim_stages(const Program *p, const SimInsnRecords *rec, const SimInsnStages *is, int *nstages) {
  const int *insn_base = rec->insn_base;
  const int64_t *issue = rec->issue, *end = rec->end;
  int n = (int)is->names->len;
  SimStage *st = g_new0(SimStage, MAX(n, 1));
  int *last_wg = g_new(int, MAX(n, 1));
  for (int i = 0; i < n; i++) {
    st[i].name = g_strdup(g_ptr_array_index(is->names, i));
    st[i].start = -1;
    last_wg[i] = -1;
  }
  for (int w = 0; w < p->nwgs; w++) {
    const WgCode *c = &p->wgs[w];
    int64_t prev = -1;
    int prev_stage = -1;
    gboolean prev_waitt = FALSE;
    for (int pc = 0; pc < c->n; pc++) {
      int k = insn_base[w] + pc;
      int i = is->of[k];
      if (i < 0) break; /* not reached */
      const Insn *in = &c->insns[pc];
      SimStage *s = &st[i];
      if (last_wg[i] != w) {
        last_wg[i] = w;
        s->wgs++;
      }
      if (s->start < 0) {
        s->start = issue[k];
        s->end = issue[k] + 1;
      }
      s->start = MIN(s->start, issue[k]);
      s->end = MAX(s->end, MAX(issue[k] + 1, end[k]));
      s->insns++;
      s->energy += rec->energy[k];
      s->hbm_lines += rec->hbm_lines[k];
      if (in->op == OP_MMA) s->mma_blocks += mma_blocks(p, in);
      int64_t gap = issue[k] - prev - 1;
      if (in->op == OP_WAIT)
        s->wait += gap;
      else if (prev_waitt)
        st[prev_stage].pace += gap;
      else
        s->stall += gap;
      prev = issue[k];
      prev_stage = i;
      prev_waitt = in->op == OP_WAITT;
    }
  }
  g_free(last_wg);
  qsort(st, (size_t)n, sizeof *st, stage_cmp);
  *nstages = n;
  return st;
}

void sim_stages_free(SimStage *st, int n) {
  for (int i = 0; i < n; i++) g_free(st[i].name);
  g_free(st);
}
