/* hot_groups.c - the hottest window's energy grouped by what the program's
 * comments say made each instruction (tcc-sim --profile, docs/machine.md
 * §8).  tcc-gen writes "; KNOB[:LINE] TASK" after every instruction
 * ("; p1.multicast.w1:39 l0.w1.k0.mc0"): the first word of a comment is its
 * knob, the second its task; a one-word comment is a task alone.  The stage
 * of a task is its name up to its first component that is not a step or a
 * layer number ("l0.w1.k0.mc0" -> "l0.w1", "t3.l1.wo.p2" -> "t3.l1.wo").
 * The simulator knows nothing else of the compiler: a hand-written comment
 * groups by its first two words the same way. */
#include <string.h>

#include "sim.h"

const char *const sim_hot_by_name[HOT_BY__COUNT] = {"knob", "stage", "task"};

/* The comment's first two words (ends exclusive), or NULL when absent. */
static void comment_words(const char *text, const char *w[2], const char *e[2]) {
  w[0] = w[1] = e[0] = e[1] = NULL;
  const char *s = strchr(text, ';');
  if (s) s++;
  for (int k = 0; s && k < 2; k++) {
    while (*s == ' ' || *s == '\t') s++;
    if (!*s) break;
    w[k] = s;
    while (*s && *s != ' ' && *s != '\t') s++;
    e[k] = s;
  }
}

/* "l0", "t12": a layer or step number. */
static gboolean numbered(const char *s, const char *end) {
  if (end - s < 2 || (*s != 'l' && *s != 't')) return FALSE;
  for (const char *c = s + 1; c < end; c++)
    if (*c < '0' || *c > '9') return FALSE;
  return TRUE;
}

/* The stage part of a task name [s, end): its end. */
static const char *stage_end(const char *s, const char *end) {
  const char *c = s;
  while (c < end) {
    const char *dot = memchr(c, '.', (size_t)(end - c));
    const char *ce = dot ? dot : end;
    if (!numbered(c, ce)) return ce;
    c = dot ? dot + 1 : end;
  }
  return end;
}

char *sim_hot_key(const char *text, HotBy by) {
  const char *w[2], *e[2];
  comment_words(text, w, e);
  const char *ts = w[1] ? w[1] : w[0], *te = w[1] ? e[1] : e[0]; /* the task */
  switch (by) {
  case HOT_BY_KNOB: return w[1] ? g_strndup(w[0], (gsize)(e[0] - w[0])) : g_strdup("(none)");
  case HOT_BY_STAGE: return ts ? g_strndup(ts, (gsize)(stage_end(ts, te) - ts)) : g_strdup("(none)");
  default: return ts ? g_strndup(ts, (gsize)(te - ts)) : g_strdup("(none)");
  }
}

static void group_clear(gpointer p) { g_free(((HotGroup *)p)->name); }

/* Largest energy first; ties by name: a stable order. */
static gint group_cmp(gconstpointer a, gconstpointer b) {
  const HotGroup *x = a, *y = b;
  if (x->energy != y->energy) return x->energy > y->energy ? -1 : 1;
  return strcmp(x->name, y->name);
}

GArray *sim_hot_groups(const Program *p, const SimResult *r, HotBy by) {
  GArray *out = g_array_new(FALSE, FALSE, sizeof(HotGroup));
  g_array_set_clear_func(out, group_clear);
  g_autoptr(GHashTable) at = g_hash_table_new(g_str_hash, g_str_equal); /* name -> index + 1 */
  for (int i = 0; i < r->nhot; i++) {
    const HotInsn *h = &r->hot[i];
    const Insn *in = &p->wgs[h->wg].insns[h->pc];
    char *key = sim_hot_key(sim_insn_text(p, in), by);
    guint k = GPOINTER_TO_UINT(g_hash_table_lookup(at, key));
    if (!k) {
      HotGroup g = {key, 0, 0};
      g_array_append_val(out, g);
      k = out->len;
      g_hash_table_insert(at, key, GUINT_TO_POINTER(k));
    } else {
      g_free(key);
    }
    HotGroup *g = &g_array_index(out, HotGroup, k - 1);
    g->energy += h->energy;
    g->insns++;
  }
  g_array_sort(out, group_cmp);
  return out;
}
