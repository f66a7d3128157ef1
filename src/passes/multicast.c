/* multicast.c - multicast insertion (multicast.pass; ir.h, pass_multicast).
 *
 * The lowering marks loads that WGs make of the same data as candidates
 * (IR_MOD_CAND: resident_owners.c's A chunks with multicast.pass); this pass
 * finds which of them can be one read and rewrites them:
 *
 *   group  the candidate loads of one HBM window (address, shape, stride)
 *          into the same window of a same-named, same-shaped RF tensor,
 *          the k-th such load of each task: the window of the schedule is
 *          "the same place in the tasks' order".  Its tasks (members) must
 *          be on different WGs; a group of one is left alone.
 *   set    the groups with the same members, numbered in the first
 *          member's order (group ord of a set).
 *   class  the groups of a set into one tensor (a buffer): its rounds.
 *          Every member must load the class's groups in the same order,
 *          else the class stays plain loads.
 *
 * Who issues (multicast.issuers = I): I issuer tasks per set, group ord by
 * issuer ord mod I, each on a WG with no task of the set's stage (the one
 * whose next task is of the latest stage first: an issuer delays what
 * follows it on its WG; then spread over the SMs, whose DMA slots they
 * use), placed right after the set's last member in program order (the
 * tasks are renumbered); or, with I = 0 or no such WG, the members in turn
 * (group ord by member ord mod n).  Round k of a class with n members,
 * events NAME_free and NAME_full (NAME: the buffer's name, '_' for '.'):
 *
 *   issuer task  WAIT stage events       what the first member waited for
 *                                        before its load (group events)
 *                WAIT NAME_free, n(k+1)  every member is done with the
 *                LD.mc d, hbm[..], {all} buffer's previous round
 *                SIG  NAME_full, 1       fires once the LD.mc has landed
 *   member       SIG  NAME_free, 1       at its point (below)
 *                WAIT NAME_full, k+1     where its own load was
 *
 * with the members issuing, the issuing member WAITs for the others'
 * (n-1)(k+1) frees at its point, LD.mc, SIGs full, and does not wait.
 *
 * A member's point is as early as the buffer allows: just after its last
 * access to the buffer before the load (with the members issuing, not
 * above a SIG, WAIT or WAITT of the task either: one may be what makes
 * the source valid); the first round's not before its own earlier loads
 * from HBM (its set-up: a resident stage's weights), so that the stream
 * starts when the members are ready rather than on top of their set-up.
 * A member's SIG fires only once every earlier instruction of its WG has
 * completed: for the first round, its task has started and the write may
 * land (the machine's race rules, docs/machine.md section 3; the tensor
 * is live from its task's first op, ir_order.c); later, it is done with
 * the buffer.  Counts are cumulative: no member frees round k+1 before it
 * has waited for round k, which needed every free of round k.  When the
 * members' programs would not order these points alike (or, with issuer
 * tasks, not in the groups' order), the set keeps each point at its load.
 *
 * The account (ir->mc, tcc-gen --explain): per stage (the first member's
 * role and layer), groups, loads replaced and the HBM lines they would
 * have read beyond one read per group. */
#include "ir.h"

#include <inttypes.h>
#include <string.h>

typedef struct Group {
  GArray *task;    /* int: members, in task order                 */
  GArray *op;      /* guint: each member's load (index in its ops) */
  GArray *dt;      /* int: each member's destination tensor        */
  int set, cls;    /* -1: not merged                              */
  int ord, round;  /* place in its set, round in its class        */
} Group;

typedef struct Class {
  int set, full, freed; /* events */
  int rounds;
} Class;

/* One op to insert into a task before op `pos`: the point or the wait of
 * group g (kind 0 / 1). */
typedef struct Ins {
  guint pos;
  int ord, kind, g;
} Ins;

static void group_free(gpointer p) {
  Group *g = p;
  g_array_free(g->task, TRUE);
  g_array_free(g->op, TRUE);
  g_array_free(g->dt, TRUE);
  g_free(g);
}

static inline const IrOp *op_at(const Ir *ir, int task, guint i) {
  return &g_array_index(ir_task_at(ir, task)->ops, IrOp, i);
}

/* The first byte the load reads. */
static uint64_t src_addr(const Ir *ir, const IrOp *op) {
  const IrTensor *x = ir_tensor(ir, op->mem.t);
  return x->offset + 4 * ((uint64_t)op->mem.r0 * (uint64_t)x->stride + (uint64_t)op->mem.c0);
}

/* HBM lines (64 bytes) the load touches: each row's, a line shared by
 * consecutive rows counted once. */
static int64_t load_lines(const Ir *ir, const IrOp *op) {
  const IrTensor *x = ir_tensor(ir, op->mem.t);
  uint64_t a = src_addr(ir, op), len = 4 * (uint64_t)op->mem.cols, row = 4 * (uint64_t)x->stride;
  int64_t n = 0, last = -1;
  for (int r = 0; r < op->mem.rows; r++) {
    int64_t first = (int64_t)((a + r * row) / 64), end = (int64_t)((a + r * row + len - 1) / 64);
    if (first <= last) first = last + 1;
    if (end >= first) n += end - first + 1;
    if (end > last) last = end;
  }
  return n;
}

/* What a candidate is: its source window and destination window. */
static char *cand_key(const Ir *ir, const IrOp *op) {
  const IrTensor *m = ir_tensor(ir, op->mem.t), *d = ir_tensor(ir, op->d.t);
  return g_strdup_printf("%s+%" PRIu64 " %dx%d/%d -> %s %dx%d [%d,%d %dx%d]", m->sym, src_addr(ir, op),
                         op->mem.rows, op->mem.cols, m->stride, d->name, d->rows, d->cols, op->d.r0,
                         op->d.c0, op->d.rows, op->d.cols);
}

/* Does op access RF tensor t? */
static gboolean touches(const IrOp *op, int t) {
  if (op->d.t == t || op->a.t == t || op->b.t == t || op->c.t == t || op->mem.t == t) return TRUE;
  for (int i = 0; i < op->ntargets; i++)
    if (op->targets[i] == t) return TRUE;
  return FALSE;
}

/* The point of a member's load at op i into tensor t: just after its last
 * access to t before i, and with `barrier`, after its last SIG/WAIT/WAITT
 * (when the member itself issues: one may be what makes the source valid). */
static guint point(const Ir *ir, int task, guint i, int t, gboolean barrier) {
  for (guint j = i; j > 0; j--) {
    const IrOp *q = op_at(ir, task, j - 1);
    if (touches(q, t) || (barrier && (q->kind == IR_SIG || q->kind == IR_WAIT || q->kind == IR_WAITT))) return j;
  }
  return 0;
}

/* An event for a class: NAME_what, NAME the buffer's name in the
 * characters an event name may have; a clash with another class's (a
 * buffer of the same name in another set) gets a number.  A lowering may
 * wait for these events by name (resident_owners.c paces the next stage's
 * weight loads by a stage's `full` events). */
static int class_event(Ir *ir, GHashTable *taken, const char *name, const char *what) {
  GString *e = g_string_new(NULL);
  for (const char *c = name; *c; c++)
    g_string_append_c(e, g_ascii_isalnum(*c) || *c == '_' ? *c : '_');
  g_string_append_printf(e, "_%s", what);
  gsize base = e->len;
  for (int k = 2; g_hash_table_contains(taken, e->str); k++) {
    g_string_truncate(e, base);
    g_string_append_printf(e, "%d", k);
  }
  int ev = ir_event(ir, e->str);
  g_hash_table_add(taken, g_string_free(e, FALSE));
  return ev;
}

static int by_pos(gconstpointer a, gconstpointer b) {
  const Ins *x = a, *y = b;
  if (x->pos != y->pos) return x->pos < y->pos ? -1 : 1;
  if (x->ord != y->ord) return x->ord < y->ord ? -1 : 1;
  if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
  return (x->g > y->g) - (x->g < y->g); /* two sets' inserts at one place */
}

/* The groups: candidates keyed by window and occurrence in their task. */
static GPtrArray *find_groups(Ir *ir, int *ncand) {
  GPtrArray *groups = g_ptr_array_new_with_free_func(group_free);
  g_autoptr(GHashTable) index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  *ncand = 0;
  for (guint k = 0; k < ir->tasks->len; k++) {
    GArray *ops = ir_task_at(ir, (int)k)->ops;
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < ops->len; i++) {
      const IrOp *op = &g_array_index(ops, IrOp, i);
      if (op->kind != IR_LD || !(op->mods & IR_MOD_CAND)) continue;
      (*ncand)++;
      char *key = cand_key(ir, op);
      int occ = GPOINTER_TO_INT(g_hash_table_lookup(seen, key));
      g_hash_table_replace(seen, key, GINT_TO_POINTER(occ + 1));
      char *gkey = g_strdup_printf("%s #%d", key, occ);
      gpointer at;
      Group *g;
      if (g_hash_table_lookup_extended(index, gkey, NULL, &at)) {
        g = g_ptr_array_index(groups, GPOINTER_TO_INT(at));
        g_free(gkey);
      } else {
        g = g_new0(Group, 1);
        g->task = g_array_new(FALSE, FALSE, sizeof(int));
        g->op = g_array_new(FALSE, FALSE, sizeof(guint));
        g->dt = g_array_new(FALSE, FALSE, sizeof(int));
        g->set = g->cls = -1;
        g_hash_table_insert(index, gkey, GINT_TO_POINTER((int)groups->len));
        g_ptr_array_add(groups, g);
      }
      int t = (int)k;
      g_array_append_val(g->task, t);
      g_array_append_val(g->op, i);
      g_array_append_val(g->dt, op->d.t);
    }
  }
  return groups;
}

/* Members on different WGs, at least two. */
static gboolean mergeable(const Ir *ir, const Group *g) {
  if (g->task->len < 2) return FALSE;
  for (guint a = 0; a < g->task->len; a++)
    for (guint b = 0; b < a; b++)
      if (ir_task_at(ir, g_array_index(g->task, int, a))->wg == ir_task_at(ir, g_array_index(g->task, int, b))->wg)
        return FALSE;
  return TRUE;
}

static char *members_key(const Group *g) {
  GString *s = g_string_new(NULL);
  for (guint a = 0; a < g->task->len; a++) g_string_append_printf(s, "%d,", g_array_index(g->task, int, a));
  return g_string_free(s, FALSE);
}

/* Sets and classes of the mergeable groups.  Groups were made in the
 * first member's order (it is the lowest task of its set), so a class's
 * rounds and a set's ordinals follow it; a class that another member loads
 * in another order is dropped.  Returns the classes. */
static GArray *form_classes(Ir *ir, GPtrArray *groups, int *nsets) {
  g_autoptr(GHashTable) sets = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) classes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  GArray *cls = g_array_new(FALSE, FALSE, sizeof(Class));
  g_autoptr(GPtrArray) last = g_ptr_array_new_with_free_func(g_free); /* per class: each member's last op */
  GArray *bad = g_array_new(FALSE, TRUE, sizeof(gboolean));
  for (guint i = 0; i < groups->len; i++) {
    Group *g = g_ptr_array_index(groups, i);
    if (!mergeable(ir, g)) continue;
    char *mk = members_key(g);
    gpointer at;
    if (!g_hash_table_lookup_extended(sets, mk, NULL, &at)) {
      at = GINT_TO_POINTER(g_hash_table_size(sets));
      g_hash_table_insert(sets, g_strdup(mk), at);
    }
    g->set = GPOINTER_TO_INT(at);
    const IrOp *op = op_at(ir, g_array_index(g->task, int, 0), g_array_index(g->op, guint, 0));
    char *ck = g_strdup_printf("%s%s", mk, ir_tensor(ir, op->d.t)->name);
    g_free(mk);
    if (!g_hash_table_lookup_extended(classes, ck, NULL, &at)) {
      at = GINT_TO_POINTER((int)cls->len);
      g_hash_table_insert(classes, ck, at);
      Class c = {.set = g->set, .full = -1, .freed = -1};
      g_array_append_val(cls, c);
      int *l = g_new(int, g->task->len);
      for (guint m = 0; m < g->task->len; m++) l[m] = -1;
      g_ptr_array_add(last, l);
      g_array_set_size(bad, cls->len);
    } else {
      g_free(ck);
    }
    g->cls = GPOINTER_TO_INT(at);
    g->round = g_array_index(cls, Class, g->cls).rounds++;
    int *l = g_ptr_array_index(last, g->cls);
    for (guint m = 0; m < g->task->len; m++) {
      int o = (int)g_array_index(g->op, guint, m);
      if (o <= l[m]) g_array_index(bad, gboolean, g->cls) = TRUE;
      l[m] = o;
    }
  }
  *nsets = (int)g_hash_table_size(sets);
  g_autofree int *ord = g_new0(int, *nsets + 1);
  for (guint i = 0; i < groups->len; i++) {
    Group *g = g_ptr_array_index(groups, i);
    if (g->cls >= 0 && g_array_index(bad, gboolean, g->cls)) g->cls = g->set = -1;
    if (g->set >= 0) g->ord = ord[g->set]++;
  }
  g_array_free(bad, TRUE);
  return cls;
}

/* Just after the last load from HBM before op i of the task that is not
 * a candidate (0: none): a member's first point comes no earlier, so that
 * its first SIG fires once its own set-up has landed (a resident stage's
 * weights) and the stream starts when every member is ready, not on top of
 * their set-up loads (the hottest power window). */
static guint set_up(const Ir *ir, int task, guint i) {
  for (guint j = i; j > 0; j--) {
    const IrOp *q = op_at(ir, task, j - 1);
    if (q->kind == IR_LD && !(q->mods & IR_MOD_CAND) && ir_tensor(ir, q->mem.t)->home == HOME_HBM) return j;
  }
  return 0;
}

/* The inserts of every member of set `set` (ins[task]: Ins), the points
 * hoisted (`hoist`; past SIG/WAIT/WAITT too with `free`) or at the loads. */
static void plan_inserts(const Ir *ir, GPtrArray *groups, int set, gboolean hoist, gboolean free, GArray **ins) {
  for (guint i = 0; i < groups->len; i++) {
    const Group *g = g_ptr_array_index(groups, i);
    if (g->set != set) continue;
    for (guint m = 0; m < g->task->len; m++) {
      int t = g_array_index(g->task, int, m);
      guint o = g_array_index(g->op, guint, m);
      if (!ins[t]) ins[t] = g_array_new(FALSE, FALSE, sizeof(Ins));
      Ins p = {hoist ? point(ir, t, o, op_at(ir, t, o)->d.t, !free) : o, g->ord, 0, (int)i};
      if (hoist && g->round == 0) p.pos = MAX(p.pos, set_up(ir, t, o));
      Ins w = {o, g->ord, 1, (int)i};
      g_array_append_val(ins[t], p);
      g_array_append_val(ins[t], w);
    }
  }
}

/* The first group of set `set` (its first member leads it), NULL: none. */
static const Group *first_of(GPtrArray *groups, int set) {
  for (guint i = 0; i < groups->len; i++)
    if (((const Group *)g_ptr_array_index(groups, i))->set == set) return g_ptr_array_index(groups, i);
  return NULL;
}

/* Is insert x one of set `set`'s? (A task may be a member of several sets:
 * rf_grid.multicast's A chunks by row group, W chunks by panel group.) */
static inline gboolean of_set(GPtrArray *groups, const Ins *x, int set) {
  return ((const Group *)g_ptr_array_index(groups, x->g))->set == set;
}

/* The next insert of set `set` in a from k on (a->len: none). */
static guint next_of(GPtrArray *groups, const GArray *a, guint k, int set) {
  while (k < a->len && !of_set(groups, &g_array_index(a, Ins, k), set)) k++;
  return k;
}

/* Do the members of the set see its points and waits in the same order? */
static gboolean same_order(GPtrArray *groups, int set, GArray **ins) {
  const Group *first = first_of(groups, set);
  if (!first) return TRUE;
  for (guint m = 0; m < first->task->len; m++) g_array_sort(ins[g_array_index(first->task, int, m)], by_pos);
  const GArray *a = ins[g_array_index(first->task, int, 0)];
  for (guint m = 1; m < first->task->len; m++) {
    const GArray *b = ins[g_array_index(first->task, int, m)];
    guint i = next_of(groups, a, 0, set), j = next_of(groups, b, 0, set);
    for (; i < a->len && j < b->len; i = next_of(groups, a, i + 1, set), j = next_of(groups, b, j + 1, set)) {
      const Ins *x = &g_array_index(a, Ins, i), *y = &g_array_index(b, Ins, j);
      if (x->g != y->g || x->kind != y->kind) return FALSE;
    }
    if (i < a->len || j < b->len) return FALSE;
  }
  return TRUE;
}

/* Drop set `set`'s inserts from ins[t], keeping those of other sets. */
static void drop_set(GPtrArray *groups, GArray *x, int set) {
  guint n = 0;
  for (guint k = 0; k < x->len; k++)
    if (!of_set(groups, &g_array_index(x, Ins, k), set)) g_array_index(x, Ins, n++) = g_array_index(x, Ins, k);
  g_array_set_size(x, n);
}

/* Rewrite task t with its inserts (sorted); `tasks_issue[set]`: the set
 * has issuer tasks (every member frees and waits), else its members issue
 * in turn. */
static void rewrite(Ir *ir, GPtrArray *groups, const GArray *cls, int t, const GArray *ins, const int *tasks_issue) {
  IrTask *tk = ir_task_at(ir, t);
  GArray *old = tk->ops;
  GArray *ops = g_array_sized_new(FALSE, TRUE, sizeof(IrOp), old->len + ins->len);
  g_autofree gboolean *gone = g_new0(gboolean, old->len + 1);
  for (guint k = 0; k < ins->len; k++) {
    const Ins *x = &g_array_index(ins, Ins, k);
    if (x->kind == 1) gone[x->pos] = TRUE;
  }
  guint k = 0;
  for (guint i = 0; i <= old->len; i++) {
    for (; k < ins->len && g_array_index(ins, Ins, k).pos == i; k++) {
      const Ins *x = &g_array_index(ins, Ins, k);
      const Group *g = g_ptr_array_index(groups, x->g);
      const Class *c = &g_array_index(cls, Class, g->cls);
      int n = (int)g->task->len, issuer = tasks_issue[g->set] ? -1 : g_array_index(g->task, int, g->ord % n);
      guint m = 0;
      while (g_array_index(g->task, int, m) != t) m++;
      const IrOp *ld = &g_array_index(old, IrOp, g_array_index(g->op, guint, m));
      IrOp op = {.kind = IR_WAIT, .d.t = -1, .a.t = -1, .b.t = -1, .mem.t = -1, .prov = ld->prov}; /* mem: c too */
      if (x->kind == 1) { /* where the load was: the others wait for it */
        if (t == issuer) continue;
        op.event = c->full, op.n = (int64_t)g->round + 1;
        g_array_append_val(ops, op);
      } else if (t != issuer) { /* done with the buffer's previous round */
        op.kind = IR_SIG, op.event = c->freed, op.n = 1;
        g_array_append_val(ops, op);
      } else {
        op.event = c->freed, op.n = (int64_t)(n - 1) * (g->round + 1);
        g_array_append_val(ops, op);
        IrOp mc = *ld;
        mc.mods = (mc.mods & ~IR_MOD_CAND) | IR_MOD_MC;
        mc.ntargets = n;
        mc.targets = g_new(int, n);
        for (int j = 0; j < n; j++) mc.targets[j] = g_array_index(g->dt, int, j);
        g_array_append_val(ops, mc);
        op.kind = IR_SIG, op.event = c->full, op.n = 1;
        g_array_append_val(ops, op);
      }
    }
    if (i < old->len && !gone[i]) g_array_append_val(ops, g_array_index(old, IrOp, i));
  }
  for (guint i = 0; i < old->len; i++) { /* the kept ops' target lists now belong to `ops` */
    IrOp *o = &g_array_index(old, IrOp, i);
    o->targets = NULL, o->ntargets = 0;
  }
  ir_task_replace_ops(ir, t, ops); /* not copied back: a P1 rewrites most of its tasks */
}

/* The WGs for the issuer tasks of each set (wg[set * per + i], -1: none),
 * up to `per` a set, among the WGs of the SMs used other than the pacing
 * WG, with no task of the set's stage and not taken by another set of that
 * stage.  An issuer runs after the tasks made before it on its WG and
 * delays those after it (it runs to the set's end), so the best WG is the
 * one whose next task (after the set's last member, `last[set]`) is of
 * the latest stage, or none; then one on an SM with fewer of the set's
 * issuers (they share its DMA slots); then the fewest ops of the stage
 * before; then the lowest number. */
static int *issuer_wgs(const Ir *ir, GPtrArray *groups, int nsets, int per, const int *last) {
  int W = MIN(ir->sms_used, ir->hw.sms) * ir->hw.wgs_per_sm;
  int *wg = g_new(int, (gsize)nsets * per + 1);
  for (int i = 0; i < nsets * per; i++) wg[i] = -1;
  g_autofree int *stage = g_new(int, nsets + 1);
  for (int s = 0; s < nsets; s++) stage[s] = -1;
  for (guint i = 0; i < groups->len; i++) {
    const Group *g = g_ptr_array_index(groups, i);
    if (g->set >= 0 && stage[g->set] < 0) stage[g->set] = ir_task_at(ir, g_array_index(g->task, int, 0))->stage;
  }
  g_autoptr(GHashTable) taken = g_hash_table_new(g_int64_hash, g_int64_equal); /* stage * W + wg */
  g_autoptr(GArray) keys = g_array_new(FALSE, FALSE, sizeof(gint64));
  g_array_set_size(keys, (guint)(nsets * per + 1));
  g_autofree int64_t *before = g_new(int64_t, W + 1);
  g_autofree int *next = g_new(int, W + 1);
  for (int s = 0; s < nsets; s++) {
    for (int w = 0; w < W; w++) before[w] = w == ir->sched.pacing_wg ? -1 : 0, next[w] = G_MAXINT;
    for (guint k = 0; k < ir->tasks->len; k++) {
      const IrTask *tk = ir_task_at(ir, (int)k);
      if (tk->wg < 0 || tk->wg >= W || before[tk->wg] < 0) continue;
      if (tk->stage == stage[s])
        before[tk->wg] = -1;
      else if (tk->stage == stage[s] - 1)
        before[tk->wg] += tk->ops->len;
      if ((int)k > last[s] && next[tk->wg] == G_MAXINT) next[tk->wg] = tk->stage;
    }
    int S = ir->hw.wgs_per_sm;
    g_autofree int *on_sm = g_new0(int, W / S + 1); /* the set's issuers per SM */
    for (int i = 0; i < per; i++) {
      int best = -1;
      for (int w = 0; w < W; w++) {
        gint64 key = (gint64)stage[s] * W + w;
        if (before[w] < 0 || g_hash_table_contains(taken, &key)) continue;
        if (best < 0 || next[w] > next[best] ||
            (next[w] == next[best] && (on_sm[w / S] < on_sm[best / S] ||
                                       (on_sm[w / S] == on_sm[best / S] && before[w] < before[best]))))
          best = w;
      }
      if (best < 0) break;
      gint64 *key = &g_array_index(keys, gint64, s * per + i);
      *key = (gint64)stage[s] * W + best;
      g_hash_table_add(taken, key);
      wg[s * per + i] = best;
      on_sm[best / S]++;
    }
  }
  return wg;
}

/* Issuer task i of set `set` on WG `wg`: for the set's groups g with
 * g->ord % per == i, in order: the WAITs on group events (stage
 * dependencies: `stage_ev`) that come before the first member's load, as
 * far as not yet waited for (what makes the source valid), WAIT until every
 * member is done with the buffer, LD.mc, SIG full. */
static int issuer_task(Ir *ir, GPtrArray *groups, const GArray *cls, int set, int i, int per, int wg,
                       const gboolean *stage_ev, int nth) {
  const Group *first = first_of(groups, set);
  const IrTask *m0 = ir_task_at(ir, g_array_index(first->task, int, 0));
  /* named after the set's first member; the nth set it leads (a member of
   * several, rf_grid.multicast's) adds .s<nth> */
  g_autofree char *name = nth ? g_strdup_printf("%s.s%d.mc%d", m0->name, nth, i) : g_strdup_printf("%s.mc%d", m0->name, i);
  IrRole role = m0->role;
  IrProv prov = m0->prov;
  int stage = m0->stage;
  int t = ir_task(ir, name, stage, prov);
  IrTask *tk = ir_task_at(ir, t);
  tk->role = role, tk->role.panel = -1, tk->wg = tk->pin = wg;
  int m0t = g_array_index(first->task, int, 0);
  g_autofree int64_t *waited = g_new0(int64_t, ir->events->len + 1);
  guint scan = 0;
  for (guint k = 0; k < groups->len; k++) {
    const Group *g = g_ptr_array_index(groups, k);
    if (g->set != set || g->ord % per != i) continue;
    const Class *c = &g_array_index(cls, Class, g->cls);
    int n = (int)g->task->len;
    guint at = g_array_index(g->op, guint, 0);
    for (; scan < at; scan++) {
      const IrOp *q = op_at(ir, m0t, scan);
      if (q->kind != IR_WAIT || q->event < 0 || !stage_ev[q->event] || q->n <= waited[q->event]) continue;
      waited[q->event] = q->n;
      IrOp *w = ir_emit(ir, t, IR_WAIT);
      w->event = q->event, w->n = q->n, w->prov = q->prov;
    }
    const IrOp *ld = op_at(ir, m0t, at);
    IrOp mc = *ld;
    IrOp *op = ir_emit(ir, t, IR_WAIT);
    op->event = c->freed, op->n = (int64_t)n * (g->round + 1), op->prov = ld->prov;
    mc.mods = (mc.mods & ~IR_MOD_CAND) | IR_MOD_MC;
    mc.ntargets = n;
    mc.targets = g_new(int, n);
    for (int j = 0; j < n; j++) mc.targets[j] = g_array_index(g->dt, int, j);
    *ir_emit(ir, t, IR_LD) = mc;
    op = ir_emit(ir, t, IR_SIG);
    op->event = c->full, op->n = 1, op->prov = ld->prov;
  }
  return t;
}

/* Move the tasks from `from` on (the issuer tasks, made last) each right
 * after the last member of its set (after[k - from]), renumbering the
 * tensors' tasks: a WG runs its tasks in this order. */
static void move_tasks(Ir *ir, guint from, const int *after) {
  guint K = ir->tasks->len;
  g_autofree int *newi = g_new(int, K + 1);
  GPtrArray *old = ir->tasks;
  g_autofree gpointer *now = g_new(gpointer, K + 1);
  guint n = 0;
  for (guint k = 0; k < from; k++) {
    newi[k] = (int)n;
    now[n++] = g_ptr_array_index(old, k);
    for (guint e = from; e < K; e++)
      if (after[e - from] == (int)k) {
        newi[e] = (int)n;
        now[n++] = g_ptr_array_index(old, e);
      }
  }
  for (guint t = 0; t < ir->tensors->len; t++) {
    IrTensor *x = ir_tensor(ir, (int)t);
    if (x->task >= 0 && (guint)x->task < K) x->task = newi[x->task];
  }
  memcpy(old->pdata, now, sizeof(gpointer) * K); /* `old` keeps its free function */
}

/* The account of group g. */
static void account(Ir *ir, GHashTable *stage, const Group *g, const IrOp *ld) {
  IrMulticast *a = ir->mc;
  const IrTask *tk = ir_task_at(ir, g_array_index(g->task, int, 0));
  char name[24];
  if (tk->role.layer >= 0)
    g_snprintf(name, sizeof name, "l%d.%s", tk->role.layer, ir_role_name[tk->role.kind]);
  else
    g_snprintf(name, sizeof name, "%s", ir_role_name[tk->role.kind]);
  gpointer at;
  if (!g_hash_table_lookup_extended(stage, name, NULL, &at)) {
    at = GINT_TO_POINTER((int)a->stages->len);
    g_hash_table_insert(stage, g_strdup(name), at);
    IrMcStage e = {0};
    memcpy(e.name, name, sizeof name);
    g_array_append_val(a->stages, e);
  }
  IrMcStage *e = &g_array_index(a->stages, IrMcStage, GPOINTER_TO_INT(at));
  int64_t saved = (int64_t)(g->task->len - 1) * load_lines(ir, ld);
  e->groups++, e->loads += (int)g->task->len, e->lines_saved += saved;
  a->groups++, a->loads += (int)g->task->len, a->lines_saved += saved;
}

/* Is the set's first member's order of points that of its groups (an
 * issuer task takes its groups in that order)? */
static gboolean points_in_order(GPtrArray *groups, int set, GArray **ins) {
  const Group *first = first_of(groups, set);
  if (!first) return TRUE;
  const GArray *a = ins[g_array_index(first->task, int, 0)];
  int last = -1;
  for (guint k = 0; k < a->len; k++) {
    const Ins *x = &g_array_index(a, Ins, k);
    if (x->kind != 0 || !of_set(groups, x, set)) continue;
    if (x->ord < last) return FALSE;
    last = x->ord;
  }
  return TRUE;
}

gboolean pass_multicast(Ir *ir, GError **err) {
  (void)err;
  int ncand, nsets;
  g_autoptr(GPtrArray) groups = find_groups(ir, &ncand);
  if (ncand == 0) return TRUE;
  g_autoptr(GArray) cls = form_classes(ir, groups, &nsets);
  /* events, in class order */
  g_autoptr(GHashTable) taken = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < groups->len; i++) {
    const Group *g = g_ptr_array_index(groups, i);
    if (g->cls < 0) continue;
    Class *c = &g_array_index(cls, Class, g->cls);
    if (c->full >= 0) continue;
    const char *name = ir_tensor(ir, g_array_index(g->dt, int, 0))->name;
    c->full = class_event(ir, taken, name, "full");
    c->freed = class_event(ir, taken, name, "free");
  }
  /* issuer tasks: how many each set gets (0: its members issue in turn) */
  int per = MAX(0, ir->sched.multicast_issuers);
  g_autofree int *last = g_new(int, nsets + 1);
  for (int s = 0; s < nsets; s++) last[s] = -1;
  for (guint i = 0; i < groups->len; i++) {
    const Group *g = g_ptr_array_index(groups, i);
    if (g->set >= 0) last[g->set] = MAX(last[g->set], g_array_index(g->task, int, g->task->len - 1));
  }
  g_autofree int *iwg = issuer_wgs(ir, groups, nsets, per, last);
  g_autofree int *tasks_issue = g_new0(int, nsets + 1);
  for (int s = 0; s < nsets; s++)
    for (int i = 0; i < per; i++) tasks_issue[s] += iwg[s * per + i] >= 0;
  /* the inserts, set by set: hoisted where the members agree */
  guint K = ir->tasks->len;
  GArray **ins = g_new0(GArray *, K + 1);
  for (int s = 0; s < nsets; s++) {
    plan_inserts(ir, groups, s, TRUE, tasks_issue[s] > 0, ins);
    if (same_order(groups, s, ins) && (!tasks_issue[s] || points_in_order(groups, s, ins))) continue;
    for (guint i = 0; i < groups->len; i++) { /* start the set's members again, unhoisted */
      const Group *g = g_ptr_array_index(groups, i);
      if (g->set != s) continue;
      for (guint m = 0; m < g->task->len; m++) {
        GArray *x = ins[g_array_index(g->task, int, m)];
        if (x) drop_set(groups, x, s);
      }
    }
    plan_inserts(ir, groups, s, FALSE, FALSE, ins);
    same_order(groups, s, ins); /* sorts them */
  }
  ir->mc = g_new0(IrMulticast, 1);
  ir->mc->stages = g_array_new(FALSE, FALSE, sizeof(IrMcStage));
  g_autoptr(GHashTable) stage = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < groups->len; i++) {
    const Group *g = g_ptr_array_index(groups, i);
    if (g->set >= 0) account(ir, stage, g, op_at(ir, g_array_index(g->task, int, 0), g_array_index(g->op, guint, 0)));
  }
  ir->mc->unmerged = ncand - ir->mc->loads;
  /* the issuer tasks read the members' loads: made before the rewrite */
  g_autofree gboolean *stage_ev = g_new0(gboolean, ir->events->len + 1);
  for (guint i = 0; i < ir->groups->len; i++) {
    int e = ir_event(ir, ((const IrGroup *)g_ptr_array_index(ir->groups, i))->event);
    if (e >= 0 && (guint)e < ir->events->len) stage_ev[e] = TRUE;
  }
  g_autoptr(GArray) after = g_array_new(FALSE, FALSE, sizeof(int));
  g_autofree int *led = g_new0(int, K + 1); /* sets led so far, by first member */
  for (int s = 0; s < nsets; s++) {
    const Group *first = first_of(groups, s);
    int nth = tasks_issue[s] > 0 && first ? led[g_array_index(first->task, int, 0)]++ : 0;
    for (int i = 0; i < tasks_issue[s]; i++) {
      issuer_task(ir, groups, cls, s, i, tasks_issue[s], iwg[s * per + i], stage_ev, nth);
      g_array_append_val(after, last[s]);
    }
  }
  for (guint t = 0; t < K; t++)
    if (ins[t]) {
      g_array_sort(ins[t], by_pos);
      rewrite(ir, groups, cls, (int)t, ins[t], tasks_issue);
      g_array_free(ins[t], TRUE);
    }
  g_free(ins);
  /* the candidates left are plain loads */
  for (guint t = 0; t < K; t++) {
    GArray *ops = ir_task_at(ir, (int)t)->ops;
    for (guint i = 0; i < ops->len; i++) g_array_index(ops, IrOp, i).mods &= ~IR_MOD_CAND;
  }
  if (after->len) move_tasks(ir, K, (const int *)(const void *)after->data);
  return TRUE;
}
