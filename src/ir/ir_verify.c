/* ir_verify.c - the invariants of the IR, checked after every pass in tests
 * (and by the pipeline before the backend).
 *
 * Each check stops at the first violation with one line naming where it is:
 *   ir: task 's3.l0.qkv.p5' op 4 (MMA.z): shape mismatch: ...
 *   ir: tensor 'l0.x' (task 's0'): ...
 *   ir: wg 3: tensors 'a' (task 's0', ...) and 'b' (task 's1', ...) overlap ...
 * Operands are written as ir_print writes them.  The rules are the
 * assembler's (docs/machine.md §2, §3) plus the IR's own: ownership of RF
 * operands, write-before-read inside a task, stable unique names, and with
 * `allocated` the results of rf_alloc (placement, live ranges, no overlap).
 * The order of the checks is fixed so that a broken IR always gets the same
 * message.
 */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "ir.h"

enum { IR_ERROR_INVALID = 1 };

typedef struct Ver {
  const Ir *ir;
  GError **err;
  Abi abi; /* the problem's memory map (symbol kinds and sizes) */
  int pb;  /* bytes per RF partition                            */
  int nwgs;
} Ver;

static gboolean fail(Ver *V, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* Set "ir: MESSAGE" and return FALSE. */
static gboolean fail(Ver *V, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *m = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(V->err, IR_ERROR, IR_ERROR_INVALID, "ir: %s", m);
  return FALSE;
}

/* ------------------------------------------------------------- naming */

static const char *task_name(const Ir *ir, int k) {
  return k >= 0 && (guint)k < ir->tasks->len ? ir_task_at(ir, k)->name : "?";
}

/* "tensor 'x' (task 's0')" or "tensor 'hbm name'" */
static char *tensor_where(const Ir *ir, int t) {
  const IrTensor *x = ir_tensor(ir, t);
  if (x->home == HOME_HBM) return g_strdup_printf("tensor '%s'", x->name);
  return g_strdup_printf("tensor '%s' (task '%s')", x->name, task_name(ir, x->task));
}

/* "task 's0' op 4 (MMA.z)" */
static char *op_where(const Ir *ir, int k, int i, const IrOp *op) {
  GString *m = g_string_new(NULL);
  g_string_append_printf(m, "task '%s' op %d (", task_name(ir, k), i);
  if ((unsigned)op->kind < IR__COUNT)
    g_string_append(m, ir_op_mnemonic[op->kind]);
  else
    g_string_append_printf(m, "?op%d", (int)op->kind);
  if (op->mods & IR_MOD_Z) g_string_append(m, ".z");
  if (op->mods & IR_MOD_T) g_string_append(m, ".t");
  if (op->mods & IR_MOD_MC) g_string_append(m, ".mc");
  if (op->mods & IR_MOD_CAND) g_string_append(m, ".cand");
  g_string_append_c(m, ')');
  return g_string_free(m, FALSE);
}

/* Where a failure is: an op (task k, op i) or a tensor (t); turned into
 * text only when a check fails, so a clean run allocates nothing per op. */
typedef struct Where {
  int k, i; /* op: task and index; k < 0 for a tensor */
  const IrOp *op;
  int t;
} Where;

static Where at_op(int k, int i, const IrOp *op) { return (Where){k, i, op, -1}; }
static Where at_tensor(int t) { return (Where){-1, -1, NULL, t}; }

static gboolean failw(Ver *V, const Where *w, const char *fmt, ...) G_GNUC_PRINTF(3, 4);

/* "ir: WHERE: MESSAGE" */
static gboolean failw(Ver *V, const Where *w, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *m = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_autofree char *where =
      w->k >= 0 ? op_where(V->ir, w->k, w->i, w->op) : tensor_where(V->ir, w->t);
  return fail(V, "%s: %s", where, m);
}

/* An RF tensor name as an assembler region: '.' becomes '_'. */
static char *region_of(const char *name) { return g_strdelimit(g_strdup(name), ".", '_'); }

static uint64_t rf_bytes(const IrTensor *x) { return 4ull * (uint64_t)x->rows * (uint64_t)x->cols; }

/* ------------------------------------------------------ events, tasks */

/* Event names are assembler identifiers, unique; index 0 is the host's "in". */
static gboolean check_events(Ver *V) {
  const GPtrArray *ev = V->ir->events;
  if (ev->len == 0 || strcmp(g_ptr_array_index(ev, 0), "in") != 0)
    return fail(V, "event 0 must be 'in' (the host's)");
  for (guint e = 0; e < ev->len; e++) {
    const char *n = g_ptr_array_index(ev, e);
    gboolean ok = g_ascii_isalpha(n[0]) || n[0] == '_';
    for (const char *c = n; ok && *c; c++) ok = g_ascii_isalnum(*c) || *c == '_';
    if (!ok) return fail(V, "event %u '%s': not a valid event name ([A-Za-z_][A-Za-z0-9_]*)", e, n);
    for (guint f = 0; f < e; f++)
      if (strcmp(g_ptr_array_index(ev, f), n) == 0)
        return fail(V, "event %u '%s': name already used by event %u", e, n, f);
  }
  return TRUE;
}

/* Task names are unique; a placed task's WG exists; with `allocated` every
 * task is placed.  Dependencies name existing groups, and a task waits only
 * for groups whose every task comes before it (creation order is run order
 * on a WG, so that cannot deadlock). */
static gboolean check_tasks(Ver *V, gboolean allocated) {
  const Ir *ir = V->ir;
  g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    gpointer prev;
    if (g_hash_table_lookup_extended(seen, t->name, NULL, &prev))
      return fail(V, "task '%s' (index %u): name already used by task %d", t->name, k,
                  GPOINTER_TO_INT(prev));
    g_hash_table_insert(seen, t->name, GINT_TO_POINTER((int)k));
    if (t->wg < -1 || t->wg >= V->nwgs)
      return fail(V, "task '%s': wg %d out of range 0..%d", t->name, t->wg, V->nwgs - 1);
    if (allocated && t->wg < 0) return fail(V, "task '%s': not placed (wg -1)", t->name);
    if (t->signals < -1 || t->signals >= (int)ir->groups->len)
      return fail(V, "task '%s': signals group %d of %u", t->name, t->signals, ir->groups->len);
  }
  g_autofree int *last = g_new(int, ir->groups->len + 1);
  for (guint g = 0; g < ir->groups->len; g++) last[g] = -1;
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    for (guint w = 0; t->waits && w < t->waits->len; w++) {
      int g = g_array_index(t->waits, int, w);
      if (g < 0 || g >= (int)ir->groups->len)
        return fail(V, "task '%s': waits for group %d of %u", t->name, g, ir->groups->len);
      if (last[g] < 0)
        return fail(V, "task '%s': waits for group %d, which no earlier task completes", t->name, g);
    }
    if (t->signals >= 0) last[t->signals] = (int)k;
  }
  /* a prelude (the ops before the task's WAITs) loads only what no task
   * stores: it runs before what the task waits for */
  g_autoptr(GHashTable) stored = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    for (guint i = 0; i < t->ops->len; i++) {
      const IrOp *op = &g_array_index(t->ops, IrOp, i);
      const IrTensor *m = op->kind == IR_ST && op->mem.t >= 0 ? ir_tensor(ir, op->mem.t) : NULL;
      if (m && m->home == HOME_HBM && m->sym) g_hash_table_add(stored, m->sym);
    }
  }
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *t = ir_task_at(ir, (int)k);
    if (t->prelude < 0 || (guint)t->prelude > t->ops->len)
      return fail(V, "task '%s': a prelude of %d ops in %u", t->name, t->prelude, t->ops->len);
    for (int i = 0; i < t->prelude; i++) {
      const IrOp *op = &g_array_index(t->ops, IrOp, i);
      const IrTensor *m = op->kind == IR_LD && op->mem.t >= 0 ? ir_tensor(ir, op->mem.t) : NULL;
      if (!m || m->home != HOME_HBM || !m->sym || g_hash_table_contains(stored, m->sym))
        return fail(V, "task '%s': op %d of its prelude is not a load of what no task stores", t->name, i);
    }
  }
  for (guint k = 0; k < ir->tasks->len; k++) { /* and no later task completes it */
    const IrTask *t = ir_task_at(ir, (int)k);
    for (guint w = 0; t->waits && w < t->waits->len; w++)
      if (last[g_array_index(t->waits, int, w)] > (int)k)
        return fail(V, "task '%s': waits for group %d, which a later task completes", t->name,
                    g_array_index(t->waits, int, w));
  }
  return TRUE;
}

/* ------------------------------------------------------------ tensors */

/* An HBM tensor is a view of one ABI symbol and lies inside it. */
static gboolean check_hbm_tensor(Ver *V, int t) {
  const IrTensor *x = ir_tensor(V->ir, t);
  Where at = at_tensor(t);
  const Where *w = &at;
  const AbiSym *s = x->sym ? wl_abi_lookup(&V->abi, x->sym) : NULL;
  if (!s) return failw(V, w, "unknown ABI symbol '%s'", x->sym ? x->sym : "(null)");
  if (x->offset % 4 != 0)
    return failw(V, w, "offset %" G_GUINT64_FORMAT " is not a multiple of 4", x->offset);
  if (x->stride < x->cols)
    return failw(V, w, "stride %d is smaller than its %d cols", x->stride, x->cols);
  uint64_t end =
      x->offset + 4ull * ((uint64_t)(x->rows - 1) * (uint64_t)x->stride + (uint64_t)x->cols);
  if (end > s->bytes)
    return failw(V, w,
                 "bytes %" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT
                 " of '%s' are outside it (%" G_GUINT64_FORMAT " bytes)",
                 x->offset, end - 1, s->name, s->bytes);
  return TRUE;
}

/* A region name after '.' -> '_': [A-Za-z_][A-Za-z0-9_]*, not hbm/sh. */
static gboolean valid_region_name(const char *n) {
  if (!(g_ascii_isalpha(n[0]) || n[0] == '_')) return FALSE;
  for (const char *c = n; *c; c++)
    if (!(g_ascii_isalnum(*c) || *c == '_' || *c == '.')) return FALSE;
  return strcmp(n, "hbm") != 0 && strcmp(n, "sh") != 0;
}

/* An RF tensor has an owner, a region-worthy name and a size the partition
 * rule allows (inside one partition or whole partitions); with `allocated`,
 * within the RF (before rf_alloc, a tensor too large for the machine is the
 * plan's error, which rf_alloc reports against its knob). */
static gboolean check_rf_tensor(Ver *V, int t, gboolean allocated) {
  const Ir *ir = V->ir;
  const IrTensor *x = ir_tensor(ir, t);
  if (x->task < 0 || (guint)x->task >= ir->tasks->len)
    return fail(V, "tensor '%s': owner task %d out of range 0..%u", x->name, x->task,
                ir->tasks->len - 1);
  Where at = at_tensor(t);
  const Where *w = &at;
  if (!valid_region_name(x->name))
    return failw(V, w,
                 "not a valid region name (letters, digits, '_' and '.'; "
                 "not starting with a digit; not hbm or sh)");
  uint64_t b = rf_bytes(x), pb = (uint64_t)V->pb, rf = pb * (uint64_t)ir->hw.vl;
  if (allocated && b > rf)
    return failw(V, w,
                 "%dx%d is %" G_GUINT64_FORMAT " bytes, more than the RF (%" G_GUINT64_FORMAT
                 " bytes)",
                 x->rows, x->cols, b, rf);
  if (b > pb && b % pb != 0)
    return failw(V, w,
                 "%dx%d is %" G_GUINT64_FORMAT " bytes: neither inside one partition "
                 "(%" G_GUINT64_FORMAT " bytes) nor a whole number of partitions",
                 x->rows, x->cols, b, pb);
  return TRUE;
}

static gboolean check_tensors(Ver *V, gboolean allocated) {
  for (guint t = 0; t < V->ir->tensors->len; t++) {
    const IrTensor *x = ir_tensor(V->ir, (int)t);
    if (!x->name || !*x->name) return fail(V, "tensor %u has no name", t);
    if (x->rows < 1 || x->cols < 1)
      return fail(V, "tensor '%s': empty shape %dx%d", x->name, x->rows, x->cols);
    if (x->home != HOME_HBM && x->home != HOME_RF)
      return fail(V, "tensor '%s': bad home %d", x->name, (int)x->home);
    if (!(x->home == HOME_HBM ? check_hbm_tensor(V, (int)t) : check_rf_tensor(V, (int)t, allocated)))
      return FALSE;
  }
  return TRUE;
}

/* ------------------------------------------------------ ops: structure */

/* The operands each kind takes (docs/machine.md §3). */
enum { U_D = 1, U_A = 2, U_B = 4, U_C = 8, U_MEM = 16, U_EV = 32 };
/* The operands an op kind takes: from its operand form in ops.def, the
 * assembler's own table (docs/machine.md §3). */
static int kind_uses(IrOpKind k) {
  switch (sim_op_form[k]) {
  case F_LD: return U_D | U_MEM;
  case F_ST: return U_A | U_MEM;
  case F_MMA:
  case F_BIN: return U_D | U_A | U_B;
  case F_FMA: return U_D | U_A | U_B | U_C;
  case F_IMM:
  case F_UN:
  case F_ROW: return U_D | U_A;
  case F_FILL: return U_D;
  case F_RED: return U_D | U_A | U_EV;
  case F_EV: return U_EV;
  case F_N:
  case F_NONE: return 0;
  }
  return 0;
}
static const char *const view_names[] = {"d", "a", "b", "c", "mem"};

/* View i of op (view_names); c and mem share their bytes (ir.h), so the
 * one the op's kind does not have is absent. */
static const IrView *op_view(const IrOp *op, int i) {
  static const IrView none = {-1, 0, 0, 0, 0};
  if ((i == 3 && ir_op_has_mem(op->kind)) || (i == 4 && !ir_op_has_mem(op->kind))) return &none;
  const IrView *v[] = {&op->d, &op->a, &op->b, &op->c, &op->mem};
  return v[i];
}

/* Kind, modifiers, and which operands are present: exactly those the kind
 * takes (an extra operand would be silently dropped by the backend). */
static gboolean check_form(Ver *V, const Where *w, const IrOp *op) {
  if ((unsigned)op->kind >= IR__COUNT) return failw(V, w, "unknown op kind");
  if (op->kind == IR_END) return failw(V, w, "END in a task (the backend ends each WG's program)");
  int allowed = op->kind == IR_MMA ? IR_MOD_Z | IR_MOD_T : op->kind == IR_LD ? IR_MOD_MC | IR_MOD_CAND : 0;
  if (op->mods & ~allowed)
    return failw(V, w, "modifier not allowed on %s", ir_op_mnemonic[op->kind]);
  int uses = kind_uses(op->kind);
  for (int i = 0; i < 5; i++) {
    gboolean has = op_view(op, i)->t >= 0, wants = (uses & (1 << i)) != 0;
    if (has && !wants) return failw(V, w, "unexpected operand %s", view_names[i]);
    if (!has && wants) return failw(V, w, "missing operand %s", view_names[i]);
  }
  gboolean ev = (uses & U_EV) != 0;
  if (ev && op->event < 0) return failw(V, w, "missing event");
  if (!ev && op->event >= 0) return failw(V, w, "unexpected event");
  if ((op->ntargets > 0 || op->targets) != ((op->mods & IR_MOD_MC) != 0))
    return failw(V, w, "LD.mc needs a target list, and only LD.mc has one");
  if ((op->mods & IR_MOD_MC) && (op->ntargets < 1 || !op->targets))
    return failw(V, w, "empty LD.mc target list");
  return TRUE;
}

/* Each present operand: a tensor that exists, a non-empty window inside it,
 * RF for d/a/b/c, HBM for LD's source, HBM or RF for ST's destination. */
static gboolean check_views(Ver *V, const Where *w, const IrOp *op) {
  const Ir *ir = V->ir;
  for (int i = 0; i < 5; i++) {
    IrView v = *op_view(op, i);
    if (v.t < 0) continue;
    if ((guint)v.t >= ir->tensors->len)
      return failw(V, w, "operand %s: tensor index %d out of range 0..%u", view_names[i], v.t,
                   ir->tensors->len - 1);
    const IrTensor *x = ir_tensor(ir, v.t);
    if (v.rows < 1 || v.cols < 1 || v.r0 < 0 || v.c0 < 0 || v.r0 > x->rows - v.rows ||
        v.c0 > x->cols - v.cols)
      return failw(V, w, "operand %s: window [%d:%d, %d:%d] is empty or outside '%s' (%dx%d)",
                   view_names[i], v.r0, v.r0 + v.rows, v.c0, v.c0 + v.cols, x->name, x->rows,
                   x->cols);
    gboolean hbm_ok = i == 4, rf_ok = i < 4 || op->kind == IR_ST;
    if (x->home == HOME_HBM && !hbm_ok)
      return failw(V, w, "operand %s: '%s' is an HBM tensor, not RF", view_names[i], x->name);
    if (x->home == HOME_RF && !rf_ok)
      return failw(V, w, "operand %s: '%s' is an RF tensor; LD reads HBM", view_names[i], x->name);
  }
  return TRUE;
}

/* RF operands belong to the op's task, or to an earlier task pinned to the
 * same WG (resident weights: kept in RF from one task to the next); ST's RF
 * destination to another task (a remote copy); LD.mc's d is one of its
 * targets, which may be anywhere. */
static gboolean check_owners(Ver *V, const Where *w, int k, const IrOp *op) {
  const Ir *ir = V->ir;
  gboolean mc = (op->mods & IR_MOD_MC) != 0;
  for (int i = 0; i < 4; i++) {
    IrView v = *op_view(op, i);
    if (v.t < 0 || (mc && i == 0)) continue;
    const IrTensor *x = ir_tensor(ir, v.t);
    if (x->task == k) continue;
    const IrTask *me = ir_task_at(ir, k);
    const IrTask *own = x->task >= 0 && (guint)x->task < ir->tasks->len ? ir_task_at(ir, x->task) : NULL;
    if (own && x->task < k && me->pin >= 0 && own->pin == me->pin && (me->wg < 0 || me->wg == me->pin) &&
        (own->wg < 0 || own->wg == own->pin))
      continue; /* kept in the RF of their common WG */
    return failw(V, w, "operand %s: tensor '%s' belongs to task '%s', not to this task",
                 view_names[i], x->name, task_name(ir, x->task));
  }
  if (op->kind == IR_ST && ir_tensor(ir, op->mem.t)->home == HOME_RF &&
      ir_tensor(ir, op->mem.t)->task == k)
    return failw(V, w, "ST into '%s' of its own task (use VEC.copy)",
                 ir_tensor(ir, op->mem.t)->name);
  return TRUE;
}

/* ------------------------------------------------------ ops: shapes */

static gboolean mismatch(Ver *V, const Where *w, int k, const char *xn, IrView x, const char *yn,
                         IrView y, const char *rule) {
  g_autofree char *xs = ir_view_str(V->ir, k, x), *ys = ir_view_str(V->ir, k, y);
  return failw(V, w, "shape mismatch: %s '%s' is %dx%d but %s '%s' is %dx%d (%s)", xn, xs, x.rows,
               x.cols, yn, ys, y.rows, y.cols, rule);
}

static gboolean same(IrView x, IrView y) { return x.rows == y.rows && x.cols == y.cols; }

/* d[MxN] (+)= a[MxK] . b[KxN]   (b is NxK with .t) */
static gboolean mma_shapes(Ver *V, const Where *w, int k, const IrOp *op) {
  gboolean t = (op->mods & IR_MOD_T) != 0;
  int bk = t ? op->b.cols : op->b.rows, bn = t ? op->b.rows : op->b.cols;
  if (op->d.rows != op->a.rows)
    return mismatch(V, w, k, "d", op->d, "a", op->a, "d must have as many rows as a");
  if (bk != op->a.cols)
    return mismatch(V, w, k, "b", op->b, "a", op->a,
                    t ? "with .t, b must have as many cols as a"
                      : "b must have as many rows as a has cols");
  if (bn != op->d.cols)
    return mismatch(V, w, k, "d", op->d, "b", op->b,
                    t ? "with .t, d must have as many cols as b has rows"
                      : "d must have as many cols as b");
  return TRUE;
}

/* b (or c) of an elementwise op: RxC, 1xC, Rx1 or 1x1 against a. */
static gboolean broadcast(Ver *V, const Where *w, int k, const char *bn, IrView b, IrView a) {
  if ((b.rows == a.rows || b.rows == 1) && (b.cols == a.cols || b.cols == 1)) return TRUE;
  g_autofree char *rule =
      g_strdup_printf("%s must be %dx%d, 1x%d, %dx1 or 1x1", bn, a.rows, a.cols, a.cols, a.rows);
  return mismatch(V, w, k, bn, b, "a", a, rule);
}

/* The assembler's shape rules per kind (docs/machine.md §3). */
static gboolean check_shapes(Ver *V, const Where *w, int k, const IrOp *op) {
  switch (op->kind) {
  case IR_LD:
    if (same(op->d, op->mem)) return TRUE;
    return mismatch(V, w, k, "mem", op->mem, "d", op->d,
                    "the memory side must have the shape of d");
  case IR_ST:
    if (same(op->a, op->mem)) return TRUE;
    return mismatch(V, w, k, "mem", op->mem, "a", op->a,
                    "the destination must have the shape of a");
  case IR_MMA: return mma_shapes(V, w, k, op);
  case IR_VFMA:
    if (!broadcast(V, w, k, "c", op->c, op->a)) return FALSE;
    /* fallthrough */
  case IR_VADD:
  case IR_VSUB:
  case IR_VMUL:
  case IR_VMAX:
  case IR_VMIN:
    if (!broadcast(V, w, k, "b", op->b, op->a)) return FALSE;
    /* fallthrough */
  case IR_VMULI:
  case IR_VADDI:
  case IR_VCOPY:
  case IR_SEXP:
  case IR_STANH:
  case IR_SRSQRT:
  case IR_SRECIP:
  case IR_RED:
    if (same(op->d, op->a)) return TRUE;
    return mismatch(V, w, k, "d", op->d, "a", op->a, "d must have the shape of a");
  case IR_VRSUM:
  case IR_VRMAX: {
    if (op->d.rows == op->a.rows && op->d.cols == 1) return TRUE;
    g_autofree char *rule = g_strdup_printf("d must be %dx1", op->a.rows);
    return mismatch(V, w, k, "d", op->d, "a", op->a, rule);
  }
  default: return TRUE;
  }
}

/* ------------------------------------------- ops: sync, memory, targets */

/* Events exist, `in` is never signalled, counts are in range; immediates
 * are finite (the assembler reads no inf/nan); RED and LD.mc need their
 * hardware. */
static gboolean check_sync(Ver *V, const Where *w, const IrOp *op) {
  const Ir *ir = V->ir;
  if (op->event >= 0 && (guint)op->event >= ir->events->len)
    return failw(V, w, "event index %d out of range 0..%u", op->event, ir->events->len - 1);
  gboolean sig = op->kind == IR_SIG || op->kind == IR_RED;
  if (sig && op->event == 0) return failw(V, w, "ev.in belongs to the host and is never signalled");
  if (op->kind == IR_SIG && op->n < 1)
    return failw(V, w, "SIG count must be >= 1, got %" G_GINT64_FORMAT, op->n);
  if ((op->kind == IR_WAIT || op->kind == IR_WAITT) && op->n < 0)
    return failw(V, w, "count must be >= 0, got %" G_GINT64_FORMAT, op->n);
  if (op->kind == IR_RED && (op->n < 1 || op->n > V->nwgs))
    return failw(V, w, "RED contributor count must be 1..%d, got %" G_GINT64_FORMAT, V->nwgs,
                 op->n);
  if (op->kind == IR_RED && ir->hw.reduce_units == 0)
    return failw(V, w, "RED needs reduce units (reduce=0)");
  if ((op->mods & IR_MOD_MC) && !ir->hw.multicast) return failw(V, w, "LD.mc needs multicast=1");
  gboolean imm = op->kind == IR_VMULI || op->kind == IR_VADDI || op->kind == IR_VFILL;
  if (imm && !isfinite(op->imm)) return failw(V, w, "immediate is not finite");
  return TRUE;
}

/* A store never writes a weights symbol (ABI_WEIGHT). */
static gboolean check_store(Ver *V, const Where *w, const IrOp *op) {
  if (op->kind != IR_ST) return TRUE;
  const IrTensor *x = ir_tensor(V->ir, op->mem.t);
  if (x->home != HOME_HBM) return TRUE;
  const AbiSym *s = wl_abi_lookup(&V->abi, x->sym);
  if (s->kind == ABI_WEIGHT)
    return failw(V, w, "ST into read-only weights '%s' (tensor '%s')", s->name, x->name);
  return TRUE;
}

/* LD.mc: every target is an RF tensor named and shaped like d's tensor, no
 * target twice, and d's tensor is one of them. */
static gboolean check_targets(Ver *V, const Where *w, const IrOp *op) {
  if (!(op->mods & IR_MOD_MC)) return TRUE;
  const Ir *ir = V->ir;
  const IrTensor *d = ir_tensor(ir, op->d.t);
  gboolean has_d = FALSE;
  for (int i = 0; i < op->ntargets; i++) {
    int t = op->targets[i];
    if (t < 0 || (guint)t >= ir->tensors->len || ir_tensor(ir, t)->home != HOME_RF)
      return failw(V, w, "target %d: %d is not an RF tensor", i, t);
    const IrTensor *x = ir_tensor(ir, t);
    if (strcmp(x->name, d->name) != 0)
      return failw(V, w, "target %d: tensor '%s' of task '%s' is not named like d's '%s'", i,
                   x->name, task_name(ir, x->task), d->name);
    if (x->rows != d->rows || x->cols != d->cols)
      return failw(V, w, "target %d: '%s' of task '%s' is %dx%d but d's tensor is %dx%d", i,
                   x->name, task_name(ir, x->task), x->rows, x->cols, d->rows, d->cols);
    for (int j = 0; j < i; j++)
      if (op->targets[j] == t) return failw(V, w, "target %d repeats target %d", i, j);
    has_d |= t == op->d.t;
  }
  if (!has_d) return failw(V, w, "d's tensor '%s' is not one of the targets", d->name);
  return TRUE;
}

static gboolean check_op(Ver *V, int k, int i, const IrOp *op) {
  Where at = at_op(k, i, op);
  const Where *w = &at;
  return check_form(V, w, op) && check_views(V, w, op) && check_owners(V, w, k, op) &&
         check_shapes(V, w, k, op) && check_sync(V, w, op) && check_store(V, w, op) &&
         check_targets(V, w, op);
}

static gboolean check_ops(Ver *V) {
  for (guint k = 0; k < V->ir->tasks->len; k++) {
    const GArray *ops = ir_task_at(V->ir, (int)k)->ops;
    for (guint i = 0; i < ops->len; i++)
      if (!check_op(V, (int)k, (int)i, &g_array_index(ops, IrOp, i))) return FALSE;
  }
  return TRUE;
}

/* ----------------------------------------------- names per WG / task */

/* RF tensor names are unique per WG once placed (per task before), also
 * after '.' -> '_' (the backend's region names). */
static gboolean check_names(Ver *V) {
  const Ir *ir = V->ir;
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint t = 0; t < ir->tensors->len; t++) {
    const IrTensor *x = ir_tensor(ir, (int)t);
    if (x->home != HOME_RF) continue;
    int wg = ir_task_at(ir, x->task)->wg;
    g_autofree char *reg = region_of(x->name);
    char *key =
        wg >= 0 ? g_strdup_printf("w%d/%s", wg, reg) : g_strdup_printf("t%d/%s", x->task, reg);
    gpointer prev;
    if (g_hash_table_lookup_extended(seen, key, NULL, &prev)) {
      g_free(key);
      const IrTensor *y = ir_tensor(ir, GPOINTER_TO_INT(prev));
      if (wg >= 0)
        return fail(V, "wg %d: tensors '%s' (task '%s') and '%s' (task '%s') are both region '%s'",
                    wg, y->name, task_name(ir, y->task), x->name, task_name(ir, x->task), reg);
      return fail(V, "task '%s': tensors '%s' and '%s' are both region '%s'",
                  task_name(ir, x->task), y->name, x->name, reg);
    }
    g_hash_table_insert(seen, key, GINT_TO_POINTER((int)t));
  }
  return TRUE;
}

/* ------------------------------------------------ write before read */

/* Tensors written by an op of another task: ST's RF destination and LD.mc
 * targets.  Their writes are ordered by events, not by the task's own
 * order, so the write-before-read walk takes them as written. */
static gboolean *remote_written(const Ir *ir) {
  gboolean *rw = g_new0(gboolean, ir->tensors->len + 1);
  for (guint k = 0; k < ir->tasks->len; k++) {
    const GArray *ops = ir_task_at(ir, (int)k)->ops;
    for (guint i = 0; i < ops->len; i++) {
      const IrOp *op = &g_array_index(ops, IrOp, i);
      if (op->kind == IR_ST && ir_tensor(ir, op->mem.t)->home == HOME_RF) rw[op->mem.t] = TRUE;
      for (int j = 0; j < op->ntargets; j++)
        if (ir_tensor(ir, op->targets[j])->task != (int)k) rw[op->targets[j]] = TRUE;
    }
  }
  return rw;
}

/* Bitmap of written elements of tensor t (lazily allocated). */
static guint8 *bits_of(const Ir *ir, guint8 **bits, GArray *used, int t) {
  if (!bits[t]) {
    const IrTensor *x = ir_tensor(ir, t);
    bits[t] = g_malloc0((gsize)x->rows * (gsize)x->cols);
    g_array_append_val(used, t);
  }
  return bits[t];
}

/* Is every element of v written?  Else the first unwritten (row, col). */
static gboolean all_written(const Ir *ir, guint8 **bits, GArray *used, IrView v, int *r, int *c) {
  const guint8 *b = bits_of(ir, bits, used, v.t);
  int cols = ir_tensor(ir, v.t)->cols;
  for (int i = v.r0; i < v.r0 + v.rows; i++) {
    const guint8 *z = memchr(b + (gsize)i * cols + v.c0, 0, (size_t)v.cols);
    if (z) {
      *r = i;
      *c = (int)((z - b) % cols);
      return FALSE;
    }
  }
  return TRUE;
}

static void mark_written(const Ir *ir, guint8 **bits, GArray *used, IrView v) {
  guint8 *b = bits_of(ir, bits, used, v.t);
  int cols = ir_tensor(ir, v.t)->cols;
  for (int i = v.r0; i < v.r0 + v.rows; i++) memset(b + (gsize)i * cols + v.c0, 1, (size_t)v.cols);
}

/* The RF views an op reads: a, b, c, and d of an accumulating MMA. */
static int op_reads(const IrOp *op, IrView *out, const char **names) {
  int n = 0;
  for (int i = 0; i < 4; i++) {
    IrView v = *op_view(op, i);
    gboolean reads = i > 0 || (op->kind == IR_MMA && !(op->mods & IR_MOD_Z));
    if (v.t < 0 || !reads) continue;
    names[n] = view_names[i];
    out[n++] = v;
  }
  return n;
}

/* Walk task k in order: every element an op reads was written earlier in
 * the task (by LD, a compute op, an LD.mc it issued) unless the tensor is
 * written remotely or kept by an earlier task of the same WG (check_owners
 * allows only that; the keeper loads it). */
static gboolean check_task_reads(Ver *V, int k, const gboolean *rw, guint8 **bits, GArray *used) {
  const Ir *ir = V->ir;
  const GArray *ops = ir_task_at(ir, k)->ops;
  for (guint i = 0; i < ops->len; i++) {
    const IrOp *op = &g_array_index(ops, IrOp, i);
    IrView rd[4];
    const char *nm[4];
    int n = op_reads(op, rd, nm), r, c;
    for (int j = 0; j < n; j++) {
      if (rw[rd[j].t] || ir_tensor(ir, rd[j].t)->task != k || all_written(ir, bits, used, rd[j], &r, &c))
        continue;
      Where at = at_op(k, (int)i, op);
      const Where *w = &at;
      g_autofree char *vs = ir_view_str(ir, k, rd[j]);
      return failw(V, w, "operand %s '%s' reads element [%d, %d] of '%s' before the task writes it",
                   nm[j], vs, r, c, ir_tensor(ir, rd[j].t)->name);
    }
    if (op->kind == IR_ST || op->kind >= IR_SIG) continue;
    if (!(op->mods & IR_MOD_MC)) {
      mark_written(ir, bits, used, op->d);
      continue;
    }
    for (int j = 0; j < op->ntargets; j++)
      if (ir_tensor(ir, op->targets[j])->task == k)
        mark_written(ir, bits, used,
                     ir_win(op->targets[j], op->d.r0, op->d.rows, op->d.c0, op->d.cols));
  }
  return TRUE;
}

static gboolean check_reads(Ver *V) {
  const Ir *ir = V->ir;
  g_autofree gboolean *rw = remote_written(ir);
  g_autofree guint8 **bits = g_new0(guint8 *, ir->tensors->len + 1);
  g_autoptr(GArray) used = g_array_new(FALSE, FALSE, sizeof(int));
  gboolean ok = TRUE;
  for (guint k = 0; ok && k < ir->tasks->len; k++) {
    ok = check_task_reads(V, (int)k, rw, bits, used);
    for (guint j = 0; j < used->len; j++)
      g_clear_pointer(&bits[g_array_index(used, int, j)], g_free);
    g_array_set_size(used, 0);
  }
  return ok;
}

/* ------------------------------------------------------- allocation */

/* Local use range of each RF tensor in its WG's op numbering (tasks in
 * order), and whether another WG writes it (remote ST, LD.mc). */
typedef struct Use {
  int first, last;
  gboolean remote;
} Use;

static void note_use(const Ir *ir, Use *u, int wg, int idx, int t, gboolean write) {
  const IrTensor *x = ir_tensor(ir, t);
  if (ir_task_at(ir, x->task)->wg != wg) {
    u[t].remote |= write;
    return;
  }
  if (u[t].first < 0 || idx < u[t].first) u[t].first = idx;
  if (idx > u[t].last) u[t].last = idx;
}

/* Fill u[] for every tensor and nops[] for every WG. */
static void collect_uses(const Ir *ir, Use *u, int *nops) {
  for (guint t = 0; t < ir->tensors->len; t++) u[t] = (Use){-1, -1, FALSE};
  for (guint k = 0; k < ir->tasks->len; k++) {
    const IrTask *tk = ir_task_at(ir, (int)k);
    for (guint i = 0; i < tk->ops->len; i++) {
      const IrOp *op = &g_array_index(tk->ops, IrOp, i);
      int idx = nops[tk->wg]++;
      for (int j = 0; j < 4; j++) {
        IrView v = *op_view(op, j);
        if (v.t >= 0 && !(j == 0 && (op->mods & IR_MOD_MC)))
          note_use(ir, u, tk->wg, idx, v.t, FALSE);
      }
      if (op->kind == IR_ST && ir_tensor(ir, op->mem.t)->home == HOME_RF)
        note_use(ir, u, tk->wg, idx, op->mem.t, TRUE);
      for (int j = 0; j < op->ntargets; j++) note_use(ir, u, tk->wg, idx, op->targets[j], TRUE);
    }
  }
}

/* "p3+512 (2 parts)" */
static char *placement_str(const IrTensor *x) {
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "p%d", x->part);
  if (x->part_off) g_string_append_printf(s, "+%d", x->part_off);
  g_string_append_printf(s, " (%d part%s)", x->nparts, x->nparts == 1 ? "" : "s");
  return g_string_free(s, FALSE);
}

/* A used tensor is allocated; an allocation obeys the partition rule. */
static gboolean check_placement(Ver *V, int t, const Use *u) {
  const IrTensor *x = ir_tensor(V->ir, t);
  Where at = at_tensor(t);
  const Where *w = &at;
  gboolean used = u->first >= 0 || u->remote;
  if (x->part < 0) return used ? failw(V, w, "used but not allocated") : TRUE;
  int64_t b = (int64_t)rf_bytes(x), pb = V->pb, vl = V->ir->hw.vl;
  gboolean ok = x->part < vl && x->part_off >= 0 && x->part_off % 4 == 0;
  if (b <= pb)
    ok = ok && x->nparts == 1 && x->part_off + b <= pb;
  else
    ok = ok && x->part_off == 0 && x->nparts == b / pb && x->part + x->nparts <= vl;
  if (!ok) {
    g_autofree char *p = placement_str(x);
    return failw(V, w,
                 "placement %s is illegal for %dx%d (%" G_GINT64_FORMAT
                 " bytes; partitions of %d bytes, p0..p%d)",
                 p, x->rows, x->cols, b, V->pb, V->ir->hw.vl - 1);
  }
  return TRUE;
}

/* The live range covers every local use, and, for a tensor other WGs
 * write, starts no later than the first op at which those writes may land
 * (`arrive`: ir_remote_first_op). */
static gboolean check_live(Ver *V, int t, const Use *u, int nops, int arrive) {
  const IrTensor *x = ir_tensor(V->ir, t);
  if (x->part < 0 || (u->first < 0 && !u->remote)) return TRUE;
  Where at = at_tensor(t);
  const Where *w = &at;
  int wg = ir_task_at(V->ir, x->task)->wg;
  if (x->first_op < 0 || x->first_op > x->last_op || x->last_op >= MAX(nops, 1))
    return failw(V, w, "live range %d..%d is not inside wg%d's ops 0..%d", x->first_op, x->last_op,
                 wg, MAX(nops, 1) - 1);
  if (u->first >= 0 && (u->first < x->first_op || u->last > x->last_op))
    return failw(V, w, "used at wg%d ops %d..%d, outside its live range %d..%d", wg, u->first,
                 u->last, x->first_op, x->last_op);
  int from = MIN(MAX(arrive, 0), MAX(nops - 1, 0));
  if (u->remote && x->first_op > from)
    return failw(V, w,
                 "written by another WG from wg%d's op %d on (the first op its writer is not "
                 "ordered after), but live only from op %d",
                 wg, from, x->first_op);
  return TRUE;
}

static int by_first_op(gconstpointer a, gconstpointer b, gpointer ir) {
  int x = *(const int *)a, y = *(const int *)b;
  int fx = ir_tensor(ir, x)->first_op, fy = ir_tensor(ir, y)->first_op;
  return fx != fy ? (fx > fy) - (fx < fy) : (x > y) - (x < y);
}

/* Two tensors of a WG whose live ranges meet do not share a byte. */
static gboolean check_overlap(Ver *V, int wg, GArray *ts) {
  const Ir *ir = V->ir;
  g_array_sort_with_data(ts, by_first_op, (gpointer)ir);
  g_autoptr(GArray) act = g_array_new(FALSE, FALSE, sizeof(int));
  for (guint i = 0; i < ts->len; i++) {
    int t = g_array_index(ts, int, i);
    const IrTensor *x = ir_tensor(ir, t);
    int64_t xs = (int64_t)x->part * V->pb + x->part_off, xe = xs + (int64_t)rf_bytes(x);
    for (guint j = 0; j < act->len;) {
      const IrTensor *y = ir_tensor(ir, g_array_index(act, int, j));
      if (y->last_op < x->first_op) {
        g_array_remove_index(act, j);
        continue;
      }
      int64_t ys = (int64_t)y->part * V->pb + y->part_off, ye = ys + (int64_t)rf_bytes(y);
      if (xs < ye && ys < xe)
        return fail(V,
                    "wg %d: tensors '%s' (task '%s', bytes %" G_GINT64_FORMAT "..%" G_GINT64_FORMAT
                    ", live %d..%d) and '%s' (task '%s', bytes %" G_GINT64_FORMAT
                    "..%" G_GINT64_FORMAT ", live %d..%d) overlap",
                    wg, y->name, task_name(ir, y->task), ys, ye - 1, y->first_op, y->last_op,
                    x->name, task_name(ir, x->task), xs, xe - 1, x->first_op, x->last_op);
      j++;
    }
    g_array_append_val(act, t);
  }
  return TRUE;
}

/* The whole program (after the last pass) runs to its end as far as its
 * events go: each WG's ops in program order (its tasks in index order), a
 * SIG adding to its event, a WAIT passing once its event has the count.
 * Events only count up and a WAIT only reads, so every order of running
 * the WGs gets equally far: running each WG until it blocks, again
 * whenever an event it waits for grows, decides it.  The host's `in`
 * counts as always released, so a WG stuck here is stuck in the machine
 * too, while a deadlock through the host (a step waiting for an output
 * its own work holds back) passes.
 *
 * RED rounds as tcc-sim runs them (docs/machine.md §3, §4): a RED
 * contributes to its group's round in progress and the WG goes on; the
 * round completes when its N-th contribution arrives, which adds 1 to the
 * group's event and makes every contributor's d ready.  Until then the
 * contributor is stalled by its next SIG, by the end of its program, and by
 * any op touching bytes of its pending d (the simulator's hazard: the same
 * tensor's overlapping window, or for allocated tensors overlapping bytes).
 * A RED from a WG already in the round in progress waits for the round to
 * complete (tcc-sim would refuse it as a second contribution if it came
 * first).  A WG stuck on a round that never gets its N contributions is a
 * deadlock like a WAIT that never passes ("wg12 waits for RED round
 * ev.red_wo_l0_p1 (1 of 2 contributions)" in tcc-sim); the error names
 * the first WG stuck on a round, else the first WG stuck.  With RED the order
 * of running the WGs could matter where more WGs than N contribute to one
 * group: this runs one order (the lowering gives each group exactly N).
 * Public (ir.h): the pipeline always runs it. */
typedef struct Pending {
  int event;
  IrView d;       /* the contribution's d, not written until the round completes */
} Pending;

typedef struct Round {
  int64_t n;      /* contributions the round in progress needs (0: none in progress) */
  GArray *wgs;    /* int: its contributors so far (NULL until a RED of the group)   */
} Round;

typedef struct Prog {
  const Ir *ir;
  int nwg;
  int pb;          /* bytes per RF partition                       */
  GArray **tasks;  /* per WG: its task indices, in order          */
  guint *task, *op; /* per WG: where it stands                     */
  int64_t *count;  /* per event                                   */
  GArray **waiting; /* per event: the WGs blocked on it            */
  GArray **pending; /* per WG: Pending, its REDs whose round is incomplete */
  int *red_block;  /* per WG: the group whose round it waits for (-1: none, or a WAIT) */
  Round *rounds;   /* per event                                   */
} Prog;

/* The RF bytes [lo, hi) a window spans (as tcc-sim's ranges: first to last
 * element, row-major in its tensor), FALSE when the tensor has no place. */
static gboolean view_bytes(const Prog *P, IrView v, int64_t *lo, int64_t *hi) {
  const IrTensor *x = ir_tensor(P->ir, v.t);
  if (x->home != HOME_RF || x->part < 0) return FALSE;
  int64_t base = (int64_t)x->part * P->pb + x->part_off;
  *lo = base + 4 * ((int64_t)v.r0 * x->cols + v.c0);
  *hi = base + 4 * ((int64_t)(v.r0 + v.rows - 1) * x->cols + v.c0 + v.cols);
  return TRUE;
}

/* Do two views of WG w's RF touch the same bytes?  The same tensor: their
 * windows meet; two allocated tensors: their byte spans meet (tcc-sim's
 * rule for aliasing regions, conservative). */
static gboolean views_meet(const Prog *P, IrView a, IrView b) {
  if (a.t == b.t)
    return a.r0 < b.r0 + b.rows && b.r0 < a.r0 + a.rows && a.c0 < b.c0 + b.cols && b.c0 < a.c0 + a.cols;
  int64_t alo, ahi, blo, bhi;
  return view_bytes(P, a, &alo, &ahi) && view_bytes(P, b, &blo, &bhi) && alo < bhi && blo < ahi;
}

/* Is tensor t in WG w's RF? */
static gboolean on_wg(const Ir *ir, int t, int w) {
  const IrTensor *x = ir_tensor(ir, t);
  return x->home == HOME_RF && ir_task_at(ir, x->task)->wg == w;
}

/* The pending RED of WG w whose d the op (of a task on w) touches, or -1. */
static int touches_pending(const Prog *P, int w, const IrOp *op) {
  GArray *pd = P->pending[w];
  IrView v[5]; /* d (not LD.mc's: its targets, below), a, b, c, ST's own-RF destination */
  int n = 0;
  for (int i = 0; i < 5; i++) {
    IrView x = *op_view(op, i);
    if (x.t < 0 || (i == 0 && (op->mods & IR_MOD_MC)) || (i == 4 && op->kind != IR_ST)) continue;
    if (on_wg(P->ir, x.t, w)) v[n++] = x; /* another WG's RF (ST wgN.x), HBM: no hazard here */
  }
  for (guint j = 0; j < pd->len; j++) {
    const Pending *p = &g_array_index(pd, Pending, j);
    for (int k = 0; k < n; k++)
      if (views_meet(P, v[k], p->d)) return (int)j;
    for (int k = 0; k < op->ntargets; k++) { /* LD.mc: its copy on this WG */
      IrView tv = ir_win(op->targets[k], op->d.r0, op->d.rows, op->d.c0, op->d.cols);
      if (on_wg(P->ir, op->targets[k], w) && views_meet(P, tv, p->d)) return (int)j;
    }
  }
  return -1;
}

/* Event e grew: the WGs blocked on it may go on. */
static void wake(Prog *P, int e, GArray *ready) {
  GArray *wq = P->waiting[e];
  if (wq->len) {
    g_array_append_vals(ready, wq->data, wq->len);
    g_array_set_size(wq, 0);
  }
}

/* WG w blocks on group e's RED round. */
static gboolean block_red(Prog *P, int w, int e) {
  P->red_block[w] = e;
  g_array_append_val(P->waiting[e], w);
  return TRUE;
}

/* WG w's RED (op) contributes to its group's round; the N-th completes it. */
static void red_contribute(Prog *P, int w, const IrOp *op, GArray *ready) {
  Round *r = &P->rounds[op->event];
  if (!r->wgs) r->wgs = g_array_new(FALSE, FALSE, sizeof(int));
  if (r->n == 0) r->n = op->n;
  g_array_append_val(r->wgs, w);
  Pending p = {op->event, op->d};
  g_array_append_val(P->pending[w], p);
  if ((int64_t)r->wgs->len < r->n) return;
  for (guint i = 0; i < r->wgs->len; i++) { /* every contributor's d is ready */
    GArray *pd = P->pending[g_array_index(r->wgs, int, i)];
    for (guint j = 0; j < pd->len; j++)
      if (g_array_index(pd, Pending, j).event == op->event) g_array_remove_index(pd, j--);
  }
  g_array_set_size(r->wgs, 0);
  r->n = 0;
  P->count[op->event]++;
  wake(P, op->event, ready);
}

/* Has WG w contributed to group e's round in progress? */
static gboolean in_round(const Prog *P, int w, int e) {
  const GArray *g = P->rounds[e].wgs;
  for (guint i = 0; g && i < g->len; i++)
    if (g_array_index(g, int, i) == w) return TRUE;
  return FALSE;
}

/* Run WG w until it blocks (TRUE) or ends (FALSE); its signals wake the
 * WGs waiting for them onto `ready`. */
static gboolean prog_run(Prog *P, int w, GArray *ready) {
  const Ir *ir = P->ir;
  GArray *ts = P->tasks[w], *pd = P->pending[w];
  P->red_block[w] = -1;
  for (; P->task[w] < ts->len; P->task[w]++, P->op[w] = 0) {
    const IrTask *t = ir_task_at(ir, g_array_index(ts, int, P->task[w]));
    const IrOp *ops = (const IrOp *)(const void *)t->ops->data;
    for (; P->op[w] < t->ops->len; P->op[w]++) {
      const IrOp *op = &ops[P->op[w]];
      if (pd->len) { /* a round in progress holds the WG at a SIG and at its d */
        int j = op->kind == IR_SIG ? 0 : touches_pending(P, w, op);
        if (j >= 0) return block_red(P, w, g_array_index(pd, Pending, j).event);
      }
      if (op->event <= 0 || (guint)op->event >= ir->events->len) continue; /* none, or `in` */
      if (op->kind == IR_RED) {
        if (in_round(P, w, op->event)) return block_red(P, w, op->event);
        red_contribute(P, w, op, ready);
      } else if (op->kind == IR_SIG) {
        P->count[op->event] += op->n;
        wake(P, op->event, ready);
      } else if (op->kind == IR_WAIT && P->count[op->event] < op->n) {
        g_array_append_val(P->waiting[op->event], w);
        return TRUE;
      }
    }
  }
  /* the END the backend adds waits for the WG's rounds too */
  return pd->len ? block_red(P, w, g_array_index(pd, Pending, 0).event) : FALSE;
}

/* The one line for WG w, stuck. */
static void stuck(const Prog *P, int w, GError **err) {
  const Ir *ir = P->ir;
  int e = P->red_block[w];
  gboolean end = P->task[w] >= P->tasks[w]->len;
  const IrTask *t = ir_task_at(ir, g_array_index(P->tasks[w], int, end ? P->tasks[w]->len - 1 : P->task[w]));
  g_autofree char *at = end ? g_strdup_printf("wg %d, the end of its program (after task '%s')", w, t->name)
                            : g_strdup_printf("wg %d, task '%s' op %u", w, t->name, P->op[w]);
  if (e >= 0) {
    const Round *r = &P->rounds[e];
    g_set_error(err, IR_ERROR, IR_ERROR_INVALID,
                "%s: waits for RED round ev.%s (%u of %" G_GINT64_FORMAT " contributions), which "
                "never completes: the other contributors are stuck or never come (a deadlock)",
                at, (const char *)g_ptr_array_index(ir->events, e), r->wgs ? r->wgs->len : 0, r->n);
    return;
  }
  const IrOp *op = &g_array_index(t->ops, IrOp, P->op[w]);
  const char *ev = g_ptr_array_index(ir->events, op->event);
  g_set_error(err, IR_ERROR, IR_ERROR_INVALID,
              "%s: WAIT ev.%s, %" G_GINT64_FORMAT " never passes: the program signals ev.%s only "
              "%" G_GINT64_FORMAT " times before every WG is stuck (a deadlock)",
              at, ev, op->n, ev, P->count[op->event]);
}

gboolean ir_verify_progress(const Ir *ir, GError **err) {
  guint E = ir->events->len, K = ir->tasks->len;
  int nwg = sim_machine_wgs(&ir->hw);
  Prog P = {ir, nwg, sim_machine_part_bytes(&ir->hw), g_new0(GArray *, nwg), g_new0(guint, nwg),
            g_new0(guint, nwg), g_new0(int64_t, E + 1), g_new0(GArray *, E + 1), g_new0(GArray *, nwg),
            g_new(int, nwg), g_new0(Round, E + 1)};
  for (int w = 0; w < nwg; w++) {
    P.tasks[w] = g_array_new(FALSE, FALSE, sizeof(int));
    P.pending[w] = g_array_new(FALSE, FALSE, sizeof(Pending));
    P.red_block[w] = -1;
  }
  for (guint e = 0; e <= E; e++) P.waiting[e] = g_array_new(FALSE, FALSE, sizeof(int));
  for (guint k = 0; k < K; k++) {
    int w = ir_task_at(ir, (int)k)->wg;
    if (w >= 0 && w < nwg) g_array_append_val(P.tasks[w], k);
  }
  g_autoptr(GArray) ready = g_array_new(FALSE, FALSE, sizeof(int));
  for (int w = 0; w < nwg; w++) g_array_append_val(ready, w);
  while (ready->len) {
    int w = g_array_index(ready, int, ready->len - 1);
    g_array_set_size(ready, ready->len - 1);
    prog_run(&P, w, ready);
  }
  /* the first WG stuck on a RED round (the likelier cause: a WAIT behind
   * it waits for what that WG would signal), else the first stuck */
  int first = -1;
  for (int w = 0; w < nwg; w++) {
    if (P.task[w] >= P.tasks[w]->len && P.red_block[w] < 0) continue;
    if (first < 0 || (P.red_block[w] >= 0 && P.red_block[first] < 0)) first = w;
  }
  gboolean ok = first < 0;
  if (!ok) stuck(&P, first, err);
  for (int w = 0; w < nwg; w++) g_array_free(P.tasks[w], TRUE), g_array_free(P.pending[w], TRUE);
  for (guint e = 0; e <= E; e++) {
    g_array_free(P.waiting[e], TRUE);
    if (P.rounds[e].wgs) g_array_free(P.rounds[e].wgs, TRUE);
  }
  g_free(P.tasks), g_free(P.task), g_free(P.op), g_free(P.count), g_free(P.waiting);
  g_free(P.pending), g_free(P.red_block), g_free(P.rounds);
  return ok;
}

/* rf_alloc's results: placement, live ranges, and no overlap per WG. */
static gboolean check_alloc(Ver *V) {
  const Ir *ir = V->ir;
  g_autofree Use *u = g_new(Use, ir->tensors->len + 1);
  g_autofree int *nops = g_new0(int, V->nwgs);
  collect_uses(ir, u, nops);
  g_autofree int *arrive = ir_remote_first_op(ir);
  GArray **per = g_new0(GArray *, V->nwgs);
  gboolean ok = TRUE;
  for (guint t = 0; ok && t < ir->tensors->len; t++) {
    const IrTensor *x = ir_tensor(ir, (int)t);
    if (x->home != HOME_RF) continue;
    int wg = ir_task_at(ir, x->task)->wg;
    ok = check_placement(V, (int)t, &u[t]) && check_live(V, (int)t, &u[t], nops[wg], arrive[t]);
    if (!ok || x->part < 0 || x->first_op < 0) continue;
    if (!per[wg]) per[wg] = g_array_new(FALSE, FALSE, sizeof(int));
    int ti = (int)t;
    g_array_append_val(per[wg], ti);
  }
  for (int w = 0; w < V->nwgs; w++) {
    if (ok && per[w]) ok = check_overlap(V, w, per[w]);
    if (per[w]) g_array_free(per[w], TRUE);
  }
  g_free(per);
  return ok;
}

/* ------------------------------------------------------------- entry */

gboolean ir_verify(const Ir *ir, gboolean allocated, GError **err) {
  Ver V = {.ir = ir, .err = err};
  g_autoptr(GError) e = NULL;
  if (!sim_machine_validate(&ir->hw, &e) || !wl_problem_validate(&ir->prob, &e)) {
    g_set_error(err, IR_ERROR, IR_ERROR_INVALID, "ir: %s", e->message);
    return FALSE;
  }
  V.pb = sim_machine_part_bytes(&ir->hw);
  V.nwgs = sim_machine_wgs(&ir->hw);
  wl_abi_build(&ir->prob, &V.abi);
  gboolean ok = check_events(&V) && check_tasks(&V, allocated) && check_tensors(&V, allocated) &&
                check_ops(&V) && check_names(&V) && check_reads(&V) &&
                (!allocated || check_alloc(&V));
  if (ok && allocated) ok = ir_verify_progress(ir, err);
  wl_abi_clear(&V.abi);
  return ok;
}
