/* ir.c - building and freeing the IR (ir.h). */
#include "ir.h"
#include "text_escape.h"

#include <stdarg.h>
#include <string.h>

G_DEFINE_QUARK(tcc-ir-error-quark, ir_error)


enum {
  TENSOR_BLOCK = 1024, /* IrTensors per block of Ir.tensor_mem: dense, few allocations */
  TASK_OPS = 24,       /* ops room of a new task (4 KiB): most tasks of the baseline   */
                       /* lowerings have 10-30 ops, so few arrays are ever moved       */
};

static void tensor_free(gpointer p) {
  IrTensor *t = p;
  g_free(t->name);
  g_free(t->sym);
}

static void op_clear(gpointer p) {
  IrOp *op = p;
  g_free(op->targets);
}

/* An ops array: what op_clear would do, in one loop over the array (no
 * call per op: a P1 program has ~170k). */
static void ops_free(GArray *a) {
  IrOp *ops = (IrOp *)(void *)a->data;
  for (guint i = 0; i < a->len; i++)
    if (ops[i].targets) g_free(ops[i].targets);
  g_array_set_clear_func(a, NULL);
  g_array_free(a, TRUE);
}

static void task_free(gpointer p) {
  IrTask *t = p;
  ops_free(t->ops);
  if (t->waits) g_array_free(t->waits, TRUE);
  g_free(t->name);
  g_free(t);
}

static void group_free(gpointer p) {
  IrGroup *g = p;
  g_free(g->event);
  g_free(g);
}

Ir *ir_new(const Machine *hw, const Problem *prob, const char *plan_file) {
  Ir *ir = g_new0(Ir, 1);
  ir->max_ops = IR_MAX_OPS;
  ir->hw = *hw;
  ir->prob = *prob;
  ir->plan_file = g_strdup(plan_file);
  ir->tensors = g_ptr_array_new_with_free_func(tensor_free);
  ir->tensor_mem = g_ptr_array_new_with_free_func(g_free);
  ir->tasks = g_ptr_array_new_with_free_func(task_free);
  ir->events = g_ptr_array_new_with_free_func(g_free);
  ir->groups = g_ptr_array_new_with_free_func(group_free);
  g_ptr_array_add(ir->events, g_strdup("in"));
  ir->sms_used = hw->sms;
  return ir;
}

void ir_free(Ir *ir) {
  if (!ir) return;
  g_ptr_array_free(ir->tensors, TRUE);
  g_ptr_array_free(ir->tensor_mem, TRUE);
  g_ptr_array_free(ir->tasks, TRUE);
  ir_events_changed(ir);
  g_ptr_array_free(ir->events, TRUE);
  g_ptr_array_free(ir->groups, TRUE);
  if (ir->mc) {
    g_array_free(ir->mc->stages, TRUE);
    g_free(ir->mc);
  }
  if (ir->ilp) {
    g_array_free(ir->ilp->stages, TRUE);
    g_free(ir->ilp);
  }
  g_free(ir->plan_file);
  g_free(ir->fit_note);
  g_free(ir->fit_account);
  if (ir->warnings) g_ptr_array_free(ir->warnings, TRUE);
  g_free(ir);
}

static IrTensor *tensor_new(Ir *ir, const char *name, int rows, int cols) {
  if (ir->tensor_mem->len == 0 || ir->tensor_fill == TENSOR_BLOCK) {
    g_ptr_array_add(ir->tensor_mem, g_new0(IrTensor, TENSOR_BLOCK));
    ir->tensor_fill = 0;
  }
  IrTensor *block = g_ptr_array_index(ir->tensor_mem, ir->tensor_mem->len - 1);
  IrTensor *t = block + ir->tensor_fill++;
  t->name = g_strdup(name);
  t->rows = t->used_rows = rows;
  t->cols = cols;
  t->task = -1;
  t->part = -1;
  t->first_op = t->last_op = -1;
  g_ptr_array_add(ir->tensors, t);
  return t;
}

int ir_tensor_hbm(Ir *ir, const char *name, const char *sym, uint64_t offset, int rows,
                  int cols, int stride) {
  IrTensor *t = tensor_new(ir, name, rows, cols);
  t->home = HOME_HBM;
  t->sym = g_strdup(sym);
  t->offset = offset;
  t->stride = stride;
  return (int)ir->tensors->len - 1;
}

int ir_tensor_rf(Ir *ir, int task, const char *name, int rows, int cols) {
  IrTensor *t = tensor_new(ir, name, rows, cols);
  t->home = HOME_RF;
  t->task = task;
  t->stride = cols;
  return (int)ir->tensors->len - 1;
}

const char *const ir_role_name[ROLE__COUNT + 1] = {"none", "ln1", "qkv",   "att",     "wo", "ln2",
                                                   "w1",   "w2",  "pacer", "preload", "relay", NULL};

IrRole ir_role(IrRoleKind kind) {
  IrRole r = {.kind = kind, .step = -1, .layer = -1, .proj = -1, .panel = -1, .tile = -1,
              .seq = -1, .head = -1, .slice = -1, .kshard = -1};
  return r;
}

int ir_role_space(IrRoleKind kind) {
  switch (kind) {
  case ROLE_LN1:
  case ROLE_LN2: return SPACE_LN;
  case ROLE_QKV: return SPACE_QKV;
  case ROLE_ATT: return SPACE_ATT;
  case ROLE_WO: return SPACE_WO;
  case ROLE_W1: return SPACE_W1;
  case ROLE_W2: return SPACE_W2;
  default: return -1;
  }
}

int ir_task(Ir *ir, const char *name, int stage, IrProv prov) {
  IrTask *t = g_new0(IrTask, 1);
  t->name = g_strdup(name);
  t->wg = -1;
  t->pin = -1;
  t->stage = stage;
  t->role = ir_role(ROLE_NONE);
  t->signals = -1;
  t->prov = prov;
  t->ops = g_array_sized_new(FALSE, TRUE, sizeof(IrOp), TASK_OPS);
  g_array_set_clear_func(t->ops, op_clear);
  g_ptr_array_add(ir->tasks, t);
  return (int)ir->tasks->len - 1;
}

/* The lowerings name an event per SIG/WAIT they make (P1's owners: a few
 * per chunk): by a hash index, not a search of the list. */
int ir_event(Ir *ir, const char *name) {
  if (!ir->event_index) {
    ir->event_index = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < ir->events->len; i++)
      g_hash_table_insert(ir->event_index, g_ptr_array_index(ir->events, i), GUINT_TO_POINTER(i + 1));
  }
  guint at = GPOINTER_TO_UINT(g_hash_table_lookup(ir->event_index, name));
  if (at) return (int)at - 1;
  char *copy = g_strdup(name);
  g_ptr_array_add(ir->events, copy);
  g_hash_table_insert(ir->event_index, copy, GUINT_TO_POINTER(ir->events->len));
  return (int)ir->events->len - 1;
}

void ir_events_changed(Ir *ir) {
  if (ir->event_index) g_hash_table_destroy(ir->event_index);
  ir->event_index = NULL;
}

int ir_group(Ir *ir, const char *event) {
  IrGroup *g = g_new0(IrGroup, 1);
  g->event = g_strdup(event);
  g_ptr_array_add(ir->groups, g);
  return (int)ir->groups->len - 1;
}

int ir_group_for(Ir *ir, const char *event, IrProv prov) {
  int g = ir_group(ir, event);
  ((IrGroup *)g_ptr_array_index(ir->groups, g))->prov = prov;
  return g;
}

/* A dependency becomes one op (SIG or WAIT) in the sync pass: counted in
 * nops now, so that the lowering's size limit sees the whole program. */
void ir_task_signals(Ir *ir, int task, int group) {
  IrTask *t = ir_task_at(ir, task);
  if (t->signals < 0) ir->nops++;
  t->signals = group;
}

void ir_task_waits(Ir *ir, int task, int group) {
  IrTask *t = ir_task_at(ir, task);
  if (!t->waits) t->waits = g_array_new(FALSE, FALSE, sizeof(int));
  g_array_append_val(t->waits, group);
  ir->nops++;
}

void ir_task_replace_ops(Ir *ir, int task, GArray *ops) {
  IrTask *t = ir_task_at(ir, task);
  ops_free(t->ops);
  g_array_set_clear_func(ops, op_clear);
  t->ops = ops;
}

/* A new array of the elements of `a` whose map[] is not -1, in order; the
 * others freed with `free_fn`; `a` freed without its elements. */
static GPtrArray *kept(GPtrArray *a, const int *map, GDestroyNotify free_fn) {
  GPtrArray *b = g_ptr_array_new_full(a->len, free_fn);
  for (guint i = 0; i < a->len; i++)
    if (map[i] >= 0)
      g_ptr_array_add(b, g_ptr_array_index(a, i));
    else
      free_fn(g_ptr_array_index(a, i));
  g_ptr_array_set_free_func(a, NULL);
  g_ptr_array_free(a, TRUE);
  return b;
}

void ir_drop(Ir *ir, const gboolean *dead_tensor, const gboolean *dead_event) {
  guint nt = ir->tensors->len, ne = ir->events->len;
  int *tmap = g_new(int, nt), *emap = g_new(int, ne);
  int n = 0;
  for (guint i = 0; i < nt; i++) tmap[i] = dead_tensor && dead_tensor[i] ? -1 : n++;
  n = 0;
  for (guint i = 0; i < ne; i++) emap[i] = i > 0 && dead_event && dead_event[i] ? -1 : n++;
  for (guint k = 0; k < ir->tasks->len; k++) {
    GArray *ops = ir_task_at(ir, (int)k)->ops;
    for (guint i = 0; i < ops->len; i++) {
      IrOp *op = &g_array_index(ops, IrOp, i);
      IrView *v[] = {&op->d, &op->a, &op->b, &op->c}; /* c: mem on LD and ST */
      for (unsigned j = 0; j < G_N_ELEMENTS(v); j++)
        if (v[j]->t >= 0) v[j]->t = tmap[v[j]->t];
      for (unsigned j = 0; j < op->ntargets; j++) op->targets[j] = tmap[op->targets[j]];
      if (op->event >= 0) op->event = emap[op->event];
    }
  }
  ir->tensors = kept(ir->tensors, tmap, tensor_free);
  ir_events_changed(ir);
  ir->events = kept(ir->events, emap, g_free);
  g_free(tmap);
  g_free(emap);
}

IrOp *ir_emit(Ir *ir, int task, IrOpKind kind) {
  IrTask *t = ir_task_at(ir, task);
  g_array_set_size(t->ops, t->ops->len + 1);
  ir->nops++;
  IrOp *op = &g_array_index(t->ops, IrOp, t->ops->len - 1);
  op->kind = kind;
  op->d.t = op->a.t = op->b.t = op->c.t = op->mem.t = -1;
  op->event = -1;
  return op;
}

IrView ir_win(int t, int r0, int rows, int c0, int cols) {
  IrView v = {t, r0, rows, c0, cols};
  return v;
}

IrView ir_all(const Ir *ir, int t) {
  const IrTensor *x = ir_tensor(ir, t);
  return ir_win(t, 0, x->used_rows, 0, x->cols);
}

IrTensor *ir_tensor(const Ir *ir, int t) { return g_ptr_array_index(ir->tensors, t); }

IrTask *ir_task_at(const Ir *ir, int k) { return g_ptr_array_index(ir->tasks, k); }

int ir_wg_sm(const Ir *ir, int wg) { return wg / ir->hw.wgs_per_sm; }

void ir_error(const Ir *ir, GError **err, IrProv at, const char *fmt, ...) {
  IrProv where = at.line > 0 ? at : ir->section;
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_autofree char *name = text_escape(ir->plan_file ? ir->plan_file : "(plan)"); /* one line */
  g_set_error(err, IR_ERROR, 1, "%s:%d:%d: error: %s", name,
              where.line > 0 ? where.line : 1, where.line > 0 ? MAX(where.col, 1) : 1, msg);
}

void ir_warning(Ir *ir, IrProv at, const char *fmt, ...) {
  IrProv where = at.line > 0 ? at : ir->section;
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (!ir->warnings) ir->warnings = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *name = text_escape(ir->plan_file ? ir->plan_file : "(plan)"); /* one line */
  g_ptr_array_add(ir->warnings, g_strdup_printf("%s:%d:%d: warning: %s", name,
                                                where.line > 0 ? where.line : 1,
                                                where.line > 0 ? MAX(where.col, 1) : 1, msg));
}

void ir_set_schedule(Ir *ir, const Schedule *s) {
  ir->sched = *s;
  ir->prob = s->dims;
  ir->section = (IrProv){wl_problem_name(s->dims.kind), s->where.line, s->where.col};
  ir->sms_used = s->sms_used > 0 ? s->sms_used : ir->hw.sms;
}

IrProv ir_prov(const Ir *ir, const char *path) {
  /* a value the power fitting chose cites power.fit, where it is decided */
  SchedLoc l = sched_loc(&ir->sched, sched_fitted(&ir->sched, path) ? "power.fit" : path);
  return (IrProv){l.path, l.line, l.col};
}
