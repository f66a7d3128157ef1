/* waits.c - what each stage waited for (tcc-sim --profile, docs/tools.md
 * "What each stage waits for").  A WAIT's cycles are a stage's `wait`
 * (stages.c): the WG-cycles between its WG's previous issue (cycle -1 for
 * a WG's first instruction) and its issue.  Here they are summed by the
 * WAIT's stage (stages.c's, the same key) and its event's family: the
 * event's name with its trailing digits replaced by "*"
 * (ev.l0_w1_k0_free3 -> ev.l0_w1_k0_free*), so that the buffers, rows and
 * steps of one hand-shake count together.  The simulator knows nothing
 * of the compiler's names beyond that. */
#include <string.h>

#include "sim.h"

/* "ev." + the name, its trailing digits (if any, and not the whole name)
 * replaced by "*". */
static char *event_family(const char *name) {
  size_t n = strlen(name), e = n;
  while (e > 0 && name[e - 1] >= '0' && name[e - 1] <= '9') e--;
  if (e == 0 || e == n) return g_strconcat("ev.", name, NULL);
  return g_strdup_printf("ev.%.*s*", (int)e, name);
}

/* Largest wait first; ties by stage, then family: a fixed order. */
static int group_cmp(const void *x, const void *y) {
  const SimWaitGroup *a = x, *b = y;
  if (a->wait != b->wait) return a->wait > b->wait ? -1 : 1;
  int c = strcmp(a->stage, b->stage);
  return c ? c : strcmp(a->family, b->family);
}

SimWaitGroup *sim_waits(const Program *p, const SimInsnRecords *rec, const SimInsnStages *is, int *ngroups) {
  GArray *gr = g_array_new(FALSE, TRUE, sizeof(SimWaitGroup));
  GArray *last_wg = g_array_new(FALSE, FALSE, sizeof(int));
  int nev = (int)p->events->len, nst = (int)is->names->len;
  char **fam = g_new0(char *, MAX(nev, 1));
  /* (stage, event family) -> group index + 1 */
  g_autoptr(GHashTable) at = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (int w = 0; w < p->nwgs; w++) {
    const WgCode *c = &p->wgs[w];
    int64_t prev = -1;
    for (int pc = 0; pc < c->n; pc++) {
      int k = rec->insn_base[w] + pc;
      int si = is->of[k];
      if (si < 0 || si >= nst) break; /* not reached */
      const Insn *in = &c->insns[pc];
      int64_t gap = rec->issue[k] - prev - 1;
      prev = rec->issue[k];
      if (in->op != OP_WAIT || in->event < 0 || in->event >= nev) continue;
      if (!fam[in->event]) fam[in->event] = event_family(g_ptr_array_index(p->events, in->event));
      const char *stage = g_ptr_array_index(is->names, si);
      char *key = g_strconcat(stage, "\n", fam[in->event], NULL);
      guint i = GPOINTER_TO_UINT(g_hash_table_lookup(at, key));
      if (!i) {
        SimWaitGroup g = {.stage = g_strdup(stage), .family = g_strdup(fam[in->event])};
        int none = -1;
        g_array_append_val(gr, g);
        g_array_append_val(last_wg, none);
        i = gr->len;
        g_hash_table_insert(at, key, GUINT_TO_POINTER(i));
      } else {
        g_free(key);
      }
      SimWaitGroup *g = &g_array_index(gr, SimWaitGroup, i - 1);
      int *lw = &g_array_index(last_wg, int, i - 1);
      if (*lw != w) {
        *lw = w;
        g->wgs++;
      }
      g->wait += gap;
      g->waits++;
      g->max = MAX(g->max, gap);
    }
  }
  for (int e = 0; e < nev; e++) g_free(fam[e]);
  g_free(fam);
  g_array_free(last_wg, TRUE);
  g_array_sort(gr, group_cmp);
  *ngroups = (int)gr->len;
  return (SimWaitGroup *)g_array_free(gr, FALSE);
}

void sim_waits_free(SimWaitGroup *g, int n) {
  for (int i = 0; i < n; i++) {
    g_free(g[i].stage);
    g_free(g[i].family);
  }
  g_free(g);
}
