/* codediff.c - per-task and per-WG line diffs and instruction-class counts
 * of two assembled programs (codediff.h). */
#include <stdio.h>
#include <string.h>

#include "codediff.h"

const char *const diff_class_name[IC__COUNT] = {"ld", "st", "mma", "vec", "sfu", "red", "sync"};

InsnClass diff_insn_class(Op op) {
  switch (sim_op_unit[op]) {
  case UNIT_DMA: return op == OP_ST ? IC_ST : IC_LD;
  case UNIT_MMA: return IC_MMA;
  case UNIT_VEC: return IC_VEC;
  case UNIT_SFU: return IC_SFU;
  case UNIT_RED: return IC_RED;
  case UNIT_NONE: break;
  }
  return IC_SYNC;
}

/* One side (a or b) of a task or a WG while the programs are read. */
typedef struct Side {
  GArray *ids;                 /* guint: interned instruction lines         */
  GArray *rf;                  /* guint: interned `.rf` declarations (WGs)  */
  gint64 count[IC__COUNT];
  int wg;                      /* the first WG seen, -1 none                */
} Side;

typedef struct Acc {
  char *name;
  Side s[2];
} Acc;

typedef struct Reader {
  DiffInterner *in;
  GHashTable *by_name;         /* task name -> Acc* (owned by `tasks`)      */
  GPtrArray *tasks;            /* Acc*, in first-seen order                 */
  Acc **wgs;                   /* by WG id, nwgs of them                    */
  int nwgs;
  GString *key;                /* scratch                                   */
} Reader;

static Acc *acc_new(char *name) {
  Acc *a = g_new0(Acc, 1);
  a->name = name;
  for (int k = 0; k < 2; k++) {
    a->s[k].ids = g_array_new(FALSE, FALSE, sizeof(guint));
    a->s[k].rf = g_array_new(FALSE, FALSE, sizeof(guint));
    a->s[k].wg = -1;
  }
  return a;
}

static void acc_free(gpointer p) {
  Acc *a = p;
  for (int k = 0; k < 2; k++) {
    g_array_free(a->s[k].ids, TRUE);
    g_array_free(a->s[k].rf, TRUE);
  }
  g_free(a->name);
  g_free(a);
}

/* The task named by the comment of an instruction line ("; knob:line TASK"
 * or "; TASK"): start and length, or length 0 when there is none. */
static const char *task_of(const char *comment, gsize *len) {
  const char *w[2] = {NULL, NULL};
  gsize l[2] = {0, 0};
  const char *s = comment;
  for (int i = 0; i < 2; i++) {
    while (*s == ' ' || *s == '\t') s++;
    if (!*s) break;
    w[i] = s;
    while (*s && *s != ' ' && *s != '\t') s++;
    l[i] = (gsize)(s - w[i]);
  }
  int k = w[1] ? 1 : 0;
  *len = l[k];
  return w[k];
}

static void add_insn(Side *s, guint id, Op op, int wg) {
  g_array_append_val(s->ids, id);
  s->count[diff_insn_class(op)]++;
  if (s->wg < 0) s->wg = wg;
}

/* Read program p as side k. */
static void read_side(Reader *r, const Program *p, int k) {
  Acc *last = NULL;
  for (int w = 0; w < p->nwgs; w++) {
    const WgCode *wc = &p->wgs[w];
    for (int pc = 0; pc < wc->n; pc++) {
      const Insn *in = &wc->insns[pc];
      const char *text = sim_insn_text(p, in);
      const char *semi = strchr(text, ';');
      gsize n = semi ? (gsize)(semi - text) : strlen(text);
      while (n > 0 && g_ascii_isspace(text[n - 1])) n--;
      g_string_truncate(r->key, 0);
      g_string_append_len(r->key, text, (gssize)n);
      guint id = diff_intern(r->in, r->key->str);
      add_insn(&r->wgs[w]->s[k], id, in->op, w);
      gsize tl = 0;
      const char *task = semi ? task_of(semi + 1, &tl) : NULL;
      if (!tl) continue; /* END: the WG's only */
      if (!last || strlen(last->name) != tl || memcmp(last->name, task, tl) != 0) {
        g_autofree char *name = g_strndup(task, tl);
        last = g_hash_table_lookup(r->by_name, name);
        if (!last) {
          last = acc_new(g_steal_pointer(&name));
          g_ptr_array_add(r->tasks, last);
          g_hash_table_insert(r->by_name, last->name, last);
        }
      }
      add_insn(&last->s[k], id, in->op, w);
    }
  }
  for (guint i = 0; i < p->regions->len; i++) {
    const Region *rg = g_ptr_array_index(p->regions, i);
    if (rg->wg < 0 || rg->wg >= r->nwgs) continue;
    g_string_printf(r->key, "%s p%d+%d %u %dx%d", rg->name, rg->part, rg->nparts, rg->byte, rg->rows,
                    rg->cols);
    guint id = diff_intern(r->in, r->key->str);
    g_array_append_val(r->wgs[rg->wg]->s[k].rf, id);
  }
}

static DiffCount diff_arrays(const GArray *a, const GArray *b) {
  return diff_ids((const guint *)(const void *)a->data, a->len, (const guint *)(const void *)b->data,
                  b->len, 0);
}

/* The summary of one accumulated task or WG. */
static CodeUnit unit_of(Acc *a, gboolean is_wg) {
  CodeUnit u = {0};
  u.name = g_steal_pointer(&a->name);
  u.wg_a = a->s[0].wg;
  u.wg_b = a->s[1].wg;
  u.lines_a = a->s[0].ids->len;
  u.lines_b = a->s[1].ids->len;
  u.lines = diff_arrays(a->s[0].ids, a->s[1].ids);
  memcpy(u.count_a, a->s[0].count, sizeof u.count_a);
  memcpy(u.count_b, a->s[1].count, sizeof u.count_b);
  u.rf_a = a->s[0].rf->len;
  u.rf_b = a->s[1].rf->len;
  u.rf = diff_arrays(a->s[0].rf, a->s[1].rf);
  u.changed = u.lines.added || u.lines.removed || u.rf.added || u.rf.removed ||
              (!is_wg && u.wg_a != u.wg_b);
  return u;
}

static void unit_clear(gpointer p) {
  CodeUnit *u = p;
  g_free(u->name);
}

CodeDiff *diff_code(const Program *a, const Program *b) {
  Reader r = {0};
  r.in = diff_interner_new();
  r.by_name = g_hash_table_new(g_str_hash, g_str_equal);
  r.tasks = g_ptr_array_new_with_free_func(acc_free);
  r.nwgs = MAX(a->nwgs, b->nwgs);
  r.wgs = g_new(Acc *, r.nwgs);
  for (int w = 0; w < r.nwgs; w++) r.wgs[w] = acc_new(g_strdup_printf("wg%d", w));
  r.key = g_string_new(NULL);
  read_side(&r, a, 0);
  read_side(&r, b, 1);

  CodeDiff *d = g_new0(CodeDiff, 1);
  d->tasks = g_array_sized_new(FALSE, TRUE, sizeof(CodeUnit), r.tasks->len);
  g_array_set_clear_func(d->tasks, unit_clear);
  d->wgs = g_array_sized_new(FALSE, TRUE, sizeof(CodeUnit), (guint)r.nwgs);
  g_array_set_clear_func(d->wgs, unit_clear);
  d->lines.exact = TRUE;
  for (guint i = 0; i < r.tasks->len; i++) {
    CodeUnit u = unit_of(g_ptr_array_index(r.tasks, i), FALSE);
    d->tasks_changed += u.changed;
    g_array_append_val(d->tasks, u);
  }
  for (int w = 0; w < r.nwgs; w++) {
    CodeUnit u = unit_of(r.wgs[w], TRUE);
    u.wg_a = w < a->nwgs ? w : -1;
    u.wg_b = w < b->nwgs ? w : -1;
    d->wgs_changed += u.changed;
    d->lines_a += u.lines_a;
    d->lines_b += u.lines_b;
    d->lines.added += u.lines.added;
    d->lines.removed += u.lines.removed;
    d->lines.exact &= u.lines.exact;
    g_array_append_val(d->wgs, u);
    acc_free(r.wgs[w]);
  }
  g_free(r.wgs);
  g_string_free(r.key, TRUE);
  g_hash_table_destroy(r.by_name);
  g_ptr_array_free(r.tasks, TRUE);
  diff_interner_free(r.in);
  return d;
}

void diff_code_free(CodeDiff *d) {
  if (!d) return;
  g_array_free(d->tasks, TRUE);
  g_array_free(d->wgs, TRUE);
  g_free(d);
}
