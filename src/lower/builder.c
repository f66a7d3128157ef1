/* builder.c - the lowering's building blocks (builder.h): names, RF tensors,
 * tasks, ops, HBM loads and stores, events and fences, the size budget. */
#include "builder.h"

#include <string.h>

/* Names without printf: the lowering makes tens of thousands (an HBM
 * tensor per LD/ST, a few RF tensors per task).  A name is built in a stack
 * buffer (ir.c copies it); an unusually long one goes through the heap. */
enum { NAME_BUF = 160 };

/* Decimal digits of v at p (no NUL); returns the count. */
static gsize put_int(char *p, int v) {
  char buf[IR_INT_CHARS];
  gsize n;
  const char *q = ir_int_text(buf, v, &n);
  memcpy(p, q, n);
  return n;
}

int lw_rf_sub(Ir *ir, int task, const char *tag, const char *what, int rows, int cols) {
  char buf[NAME_BUF];
  gsize a = strlen(tag), b = strlen(what);
  if (a + b + 2 > sizeof buf) {
    g_autofree char *name = g_strconcat(tag, ".", what, NULL);
    return lw_rf(ir, task, name, rows, cols);
  }
  memcpy(buf, tag, a);
  buf[a] = '.';
  memcpy(buf + a + 1, what, b + 1);
  return lw_rf(ir, task, buf, rows, cols);
}

int lw_rf(Ir *ir, int task, const char *name, int rows, int cols) {
  int part = sim_machine_part_bytes(&ir->hw), row_bytes = 4 * cols, r = rows;
  if (row_bytes * rows > part)
    while ((row_bytes * r) % part != 0) r++;
  int t = ir_tensor_rf(ir, task, name, r, cols);
  ir_tensor(ir, t)->used_rows = rows;
  return t;
}

static const char *const weight_name[PROJ__COUNT] = {"wqkv", "wo", "w1", "w2"};
static const char *const bias_name[PROJ__COUNT] = {"bqkv", "bo", "b1", "b2"};

char *lw_weight_sym(SchedProj j, int l) { return g_strdup_printf("%s.l%d", weight_name[j], l); }

char *lw_bias_sym(SchedProj j, int l) { return g_strdup_printf("%s.l%d", bias_name[j], l); }

int lw_task(Ir *ir, const char *tag, int stage, IrProv prov, IrRole role) {
  int task = ir_task(ir, tag, stage, prov);
  ir_task_at(ir, task)->role = role;
  return task;
}

IrView lw_view(const Ir *ir, int t, int rows, int cols) {
  (void)ir;
  return ir_win(t, 0, rows, 0, cols);
}

/* An HBM tensor for one transfer: a rows x cols window of a symbol's
 * matrix, named "SYM[r0,c0]". */
static int hbm(Ir *ir, const char *sym, int r0, int c0, int rows, int cols, int stride) {
  uint64_t off = 4ull * ((uint64_t)r0 * (uint64_t)stride + (uint64_t)c0);
  char buf[NAME_BUF];
  gsize n = strlen(sym);
  if (n + 2 * 11 + 4 > sizeof buf) {
    g_autofree char *name = g_strdup_printf("%s[%d,%d]", sym, r0, c0);
    return ir_tensor_hbm(ir, name, sym, off, rows, cols, stride);
  }
  memcpy(buf, sym, n);
  buf[n++] = '[';
  n += put_int(buf + n, r0);
  buf[n++] = ',';
  n += put_int(buf + n, c0);
  buf[n++] = ']';
  buf[n] = '\0';
  return ir_tensor_hbm(ir, buf, sym, off, rows, cols, stride);
}

void lw_load(Ir *ir, int task, IrView rf, const char *sym, int r0, int c0, int stride, IrProv prov) {
  IrOp *op = ir_emit(ir, task, IR_LD);
  op->d = rf;
  op->mem = ir_all(ir, hbm(ir, sym, r0, c0, rf.rows, rf.cols, stride));
  op->prov = prov;
}

void lw_mat_at(const LwMat *m, int r, int c, int *r0, int *c0, int *stride) {
  if (!m->packed) {
    *r0 = r, *c0 = m->base + c, *stride = m->width;
    return;
  }
  int blocks = m->width / LW_BLOCK;
  *r0 = ((r / LW_BLOCK) * blocks + c / LW_BLOCK) * LW_BLOCK + r % LW_BLOCK;
  *c0 = m->base + c % LW_BLOCK;
  *stride = LW_BLOCK;
}

/* The window of rf at (r, c) of m, one transfer per block it touches. */
static void move_mat(Ir *ir, int task, IrView rf, const char *sym, const LwMat *m, int r, int c, IrProv prov,
                     gboolean store) {
  int rn = 0;
  for (int i = 0; i < rf.rows; i += rn) {
    rn = m->packed ? MIN(rf.rows - i, LW_BLOCK - (r + i) % LW_BLOCK) : rf.rows;
    int cn = 0;
    for (int j = 0; j < rf.cols; j += cn) {
      cn = m->packed ? MIN(rf.cols - j, LW_BLOCK - (c + j) % LW_BLOCK) : rf.cols;
      IrView w = ir_win(rf.t, rf.r0 + i, rn, rf.c0 + j, cn);
      int r0, c0, stride;
      lw_mat_at(m, r + i, c + j, &r0, &c0, &stride);
      (store ? lw_store : lw_load)(ir, task, w, sym, r0, c0, stride, prov);
    }
  }
}

void lw_load_mat(Ir *ir, int task, IrView rf, const char *sym, const LwMat *m, int r, int c, IrProv prov) {
  move_mat(ir, task, rf, sym, m, r, c, prov, FALSE);
}

void lw_store_mat(Ir *ir, int task, IrView rf, const char *sym, const LwMat *m, int r, int c, IrProv prov) {
  move_mat(ir, task, rf, sym, m, r, c, prov, TRUE);
}

void lw_store(Ir *ir, int task, IrView rf, const char *sym, int r0, int c0, int stride, IrProv prov) {
  int m = hbm(ir, sym, r0, c0, rf.rows, rf.cols, stride);
  IrOp *op = ir_emit(ir, task, IR_ST);
  op->a = rf;
  op->mem = ir_all(ir, m);
  op->prov = prov;
}

IrOp *lw_op(Ir *ir, int task, IrOpKind k, IrView d, IrView a, IrView b, IrProv prov) {
  IrOp *op = ir_emit(ir, task, k);
  op->d = d;
  op->a = a;
  op->b = b;
  op->prov = prov;
  return op;
}

IrOp *lw_opi(Ir *ir, int task, IrOpKind k, IrView d, IrView a, float imm, IrProv prov) {
  IrOp *op = ir_emit(ir, task, k);
  op->d = d;
  op->a = a;
  op->imm = imm;
  op->prov = prov;
  return op;
}

void lw_sig(Ir *ir, int task, const char *ev, IrProv prov) {
  IrOp *op = ir_emit(ir, task, IR_SIG);
  op->event = ir_event(ir, ev);
  op->n = 1;
  op->prov = prov;
}

void lw_wait(Ir *ir, int task, const char *ev, int64_t n, IrProv prov) {
  IrOp *op = ir_emit(ir, task, IR_WAIT);
  op->event = ir_event(ir, ev);
  op->n = n;
  op->prov = prov;
}

void lw_fence(Ir *ir, int task, int n, IrProv prov) {
  g_autofree char *ev = g_strdup_printf("fence_%s", ir_task_at(ir, task)->name);
  for (char *q = ev; *q; q++)
    if (*q == '.') *q = '_';
  lw_sig(ir, task, ev, prov);
  lw_wait(ir, task, ev, n, prov);
}

void lw_waitt(Ir *ir, int task, int64_t n, IrProv prov) {
  if (n <= 0) return;
  IrOp *op = ir_emit(ir, task, IR_WAITT);
  op->n = n;
  op->prov = prov;
}

LwProj lw_proj(const Ir *ir, SchedProj k) {
  char path[32], kpath[32];
  g_snprintf(path, sizeof path, "panels.%s", sched_proj_name[k]);
  g_snprintf(kpath, sizeof kpath, "k_chunk.%s", sched_proj_name[k]);
  LwProj p = {k, ir->sched.panel[k], ir->sched.k_chunk[k], ir_prov(ir, path), ir_prov(ir, kpath),
              ir->sched.stream_depth, ir_prov(ir, "stream_depth")};
  return p;
}

gboolean lw_budget_units(Ir *ir, GError **err, int done, int total, const char *unit, IrProv dim,
                         const char *name) {
  double per = (double)ir->nops / done, whole = per * total;
  if (whole <= (double)ir->max_ops) return TRUE;
  ir_error(ir, err, dim,
           "%s=%d makes a program of about %.0f instructions (%.0f per %s), more than tcc-gen's "
           "limit of %" G_GSIZE_FORMAT "; at most about %d fit",
           name, total, whole, per, unit, ir->max_ops, (int)((double)ir->max_ops / per));
  return FALSE;
}

gboolean lw_budget_stage(Ir *ir, GError **err, int stages, int of, const char *unit, IrProv dim,
                         const char *name, int value) {
  if (ir->nops <= ir->max_ops || stages < 1) return TRUE;
  /* the unit so far, scaled to all its stages: a lower bound on its size */
  double size = (double)ir->nops * of / stages;
  int fit = (int)(value * ((double)ir->max_ops / size));
  g_autofree char *hint = fit >= 1 ? g_strdup_printf("at most about %d fit", fit)
                                   : g_strdup_printf("even %s=1 may not fit: the other dims make it large", name);
  ir_error(ir, err, dim,
           "%s=%d makes one %s's program alone more than tcc-gen's limit of %" G_GSIZE_FORMAT
           " instructions (%" G_GSIZE_FORMAT " after %d of its %d stages); %s",
           name, value, unit, ir->max_ops, ir->nops, stages, of, hint);
  return FALSE;
}
