/* test_parse.c - ir_parse, the text form of the IR read back:
 *
 *   round trip  for every good plan of tests/golden and plans/baseline.yaml
 *               (both problems), the IR after every pass of pass_table:
 *               print -> parse -> print is byte-identical, the parsed IR
 *               equals the original field by field (ops, views, events,
 *               provenance with its column, roles, dependencies, the
 *               schedule record), ir_verify says the same of both, and the
 *               rest of the pipeline run on the parsed IR gives the same
 *               final IR and assembly;
 *   every op    an IR built by hand with every op kind, modifier, operand
 *               form, immediate edge case (exactly, bit for bit) and tensor
 *               form round-trips;
 *   hand-written  a short IR (partial .machine/.problem, a partial record)
 *               gets the defaults documented in ir_parse.c;
 *   errors      one exact message per class of error. */
#include <math.h>
#include <string.h>

#include "ir_parse.h"
#include "pipeline.h"
#include "plan_internal.h" /* the knob table: compare the typed knobs */
#include "tests.h"

/* ------------------------------------------------------------ helpers */

static int cmp_str(gconstpointer a, gconstpointer b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The good plans of tests/golden (not bad_*), sorted by name. */
static GPtrArray *golden_plans(void) {
  GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GDir) dir = g_dir_open(TCC_TOP "/tests/golden", 0, NULL);
  ck_assert_msg(dir, "cannot open tests/golden");
  for (const char *n; (n = g_dir_read_name(dir));)
    if (g_str_has_suffix(n, ".yaml") && !g_str_has_prefix(n, "bad_"))
      g_ptr_array_add(a, g_strconcat("tests/golden/", n, NULL));
  g_ptr_array_sort(a, cmp_str);
  return a;
}

/* A plan file of the tree, named by its path relative to the top. */
static Plan *plan_file(const char *rel) {
  g_autofree char *path = g_build_filename(TCC_TOP, rel, NULL), *text = NULL;
  gsize len = 0;
  ck_assert_msg(g_file_get_contents(path, &text, &len, NULL), "cannot read %s", path);
  g_autoptr(GError) err = NULL;
  Plan *p = plan_parse(rel, text, len, &err);
  ck_assert_msg(p, "%s: %s", rel, err ? err->message : "?");
  return p;
}

/* Parse `text`, which must succeed. */
static Ir *parse_ok(const char *what, const char *text) {
  g_autoptr(GError) err = NULL;
  Ir *ir = ir_parse(what, text, strlen(text), &err);
  ck_assert_msg(ir, "%s: %s", what, err ? err->message : "?");
  return ir;
}

/* The first line where two texts differ, for a failure message. */
static char *first_diff(const char *a, const char *b) {
  int line = 1;
  const char *la = a, *lb = b;
  for (; *a && *a == *b; a++, b++)
    if (*a == '\n') line++, la = a + 1, lb = b + 1;
  g_autofree char *x = g_strndup(la, strcspn(la, "\n")), *y = g_strndup(lb, strcspn(lb, "\n"));
  return g_strdup_printf("line %d:\n  printed: %s\n  parsed:  %s", line, x, y);
}

/* print -> parse -> print of `ir` is identical; returns the parsed IR. */
static Ir *round_trip(const char *what, const Ir *ir) {
  g_autofree char *text = ir_print(ir);
  Ir *back = parse_ok(what, text);
  g_autofree char *again = ir_print(back);
  if (strcmp(text, again) != 0) {
    g_autofree char *d = first_diff(text, again);
    ck_abort_msg("%s: print -> parse -> print differs at %s", what, d);
  }
  return back;
}

/* ------------------------------------------- field-by-field comparison */

static const char *owner_name(const Ir *ir, const IrTensor *x) {
  return x->task >= 0 && (guint)x->task < ir->tasks->len ? ir_task_at(ir, x->task)->name : "-";
}

/* An operand as text that does not depend on tensor indices: RF by task,
 * name and window; HBM by symbol, first byte, stride and shape. */
static char *view_key(const Ir *ir, IrView v) {
  if (v.t < 0) return g_strdup("-");
  const IrTensor *x = ir_tensor(ir, v.t);
  if (x->home == HOME_HBM)
    return g_strdup_printf("hbm %s+%" G_GUINT64_FORMAT " stride %d %dx%d", x->sym,
                           (uint64_t)(x->offset + 4 * ((uint64_t)v.r0 * (uint64_t)x->stride +
                                                       (uint64_t)v.c0)),
                           x->stride, v.rows, v.cols);
  return g_strdup_printf("%s@%s[%d+%d, %d+%d]", x->name, owner_name(ir, x), v.r0, v.rows, v.c0,
                         v.cols);
}

static gboolean same_prov(IrProv a, IrProv b) {
  return g_strcmp0(a.knob, b.knob) == 0 && a.line == b.line && a.col == b.col;
}

/* "FAMILY#N" of a group, as the printer numbers it. */
static char *group_key(const Ir *ir, int g) {
  if (g < 0) return g_strdup("-");
  const IrGroup *grp = g_ptr_array_index(ir->groups, g);
  int n = 0;
  for (int i = 0; i < g; i++)
    n += strcmp(((const IrGroup *)g_ptr_array_index(ir->groups, i))->event, grp->event) == 0;
  return g_strdup_printf("%s#%d", grp->event, n);
}

#define SAME(cond, ...)                                   \
  do {                                                    \
    if (!(cond)) ck_abort_msg(__VA_ARGS__);               \
  } while (0)

/* Two ops are the same op (tensors compared by name, not index); tp:
 * their tasks' provenance, which applies to an op without its own. */
static void same_op(const char *what, const Ir *a, const IrOp *x, const Ir *b, const IrOp *y,
                    IrProv tp) {
  SAME(x->kind == y->kind && x->mods == y->mods, "%s: kind/mods %d/%d vs %d/%d", what, x->kind,
       x->mods, y->kind, y->mods);
  SAME(memcmp(&x->imm, &y->imm, sizeof x->imm) == 0, "%s: imm %.9g vs %.9g", what, x->imm, y->imm);
  SAME(x->n == y->n, "%s: n %" G_GINT64_FORMAT " vs %" G_GINT64_FORMAT, what, x->n, y->n);
  const char *ex = x->event >= 0 ? g_ptr_array_index(a->events, x->event) : "-";
  const char *ey = y->event >= 0 ? g_ptr_array_index(b->events, y->event) : "-";
  SAME(strcmp(ex, ey) == 0, "%s: event %s vs %s", what, ex, ey);
  const IrView *vx[] = {&x->d, &x->a, &x->b, &x->c, &x->mem};
  const IrView *vy[] = {&y->d, &y->a, &y->b, &y->c, &y->mem};
  for (int i = 0; i < 5; i++) {
    g_autofree char *kx = view_key(a, *vx[i]), *ky = view_key(b, *vy[i]);
    SAME(strcmp(kx, ky) == 0, "%s: operand %d: %s vs %s", what, i, kx, ky);
  }
  SAME(x->ntargets == y->ntargets, "%s: %d vs %d targets", what, x->ntargets, y->ntargets);
  for (int i = 0; i < x->ntargets; i++) {
    g_autofree char *kx = view_key(a, ir_all(a, x->targets[i]));
    g_autofree char *ky = view_key(b, ir_all(b, y->targets[i]));
    SAME(strcmp(kx, ky) == 0, "%s: target %d: %s vs %s", what, i, kx, ky);
  }
  IrProv px = x->prov.knob ? x->prov : tp, py = y->prov.knob ? y->prov : tp;
  SAME(same_prov(px, py), "%s: provenance %s:%d:%d vs %s:%d:%d", what, px.knob ? px.knob : "-",
       px.line, px.col, py.knob ? py.knob : "-", py.line, py.col);
}

/* The RF tensors of task k (or of no valid task, k = -1) in index order. */
static GPtrArray *task_rfs(const Ir *ir, int k) {
  GPtrArray *a = g_ptr_array_new();
  for (guint t = 0; t < ir->tensors->len; t++) {
    IrTensor *x = ir_tensor(ir, (int)t);
    gboolean valid = x->task >= 0 && (guint)x->task < ir->tasks->len;
    if (x->home == HOME_RF && (valid ? x->task == k : k < 0)) g_ptr_array_add(a, x);
  }
  return a;
}

static void same_tensor(const char *what, const IrTensor *x, const IrTensor *y) {
  SAME(strcmp(x->name, y->name) == 0 && x->home == y->home && x->rows == y->rows &&
           x->cols == y->cols && x->used_rows == y->used_rows && x->stride == y->stride,
       "%s: tensor %s %dx%d (%d) vs %s %dx%d (%d)", what, x->name, x->rows, x->cols, x->used_rows,
       y->name, y->rows, y->cols, y->used_rows);
  if (x->home == HOME_HBM) {
    SAME(strcmp(x->sym, y->sym) == 0 && x->offset == y->offset, "%s: tensor %s: %s+%" G_GUINT64_FORMAT
         " vs %s+%" G_GUINT64_FORMAT, what, x->name, x->sym, x->offset, y->sym, y->offset);
    return;
  }
  SAME(x->part == y->part && x->part_off == y->part_off && x->first_op == y->first_op &&
           x->last_op == y->last_op && (x->part < 0 || x->nparts == y->nparts),
       "%s: tensor %s: p%d+%d (%d) live %d..%d vs p%d+%d (%d) live %d..%d", what, x->name,
       x->part, x->part_off, x->nparts, x->first_op, x->last_op, y->part, y->part_off, y->nparts,
       y->first_op, y->last_op);
}

/* The schedule record: every entry (path, place, value text) and every
 * typed knob; not .where (not printed).  An IR without a record (built by
 * hand) parses to an empty one. */
static void same_record(const char *what, const Schedule *a, const Schedule *b) {
  SAME(a->present == b->present, "%s: record present %d vs %d", what, a->present, b->present);
  for (int i = 0; i < SCHED_NKNOBS; i++) {
    const SchedLoc *x = &a->loc[i], *y = &b->loc[i];
    SAME(g_strcmp0(x->path, y->path) == 0 && x->line == y->line && x->col == y->col &&
             strcmp(a->value[i], b->value[i]) == 0,
         "%s: record entry %d: %s = %s (%d:%d) vs %s = %s (%d:%d)", what, i, x->path, a->value[i],
         x->line, x->col, y->path, b->value[i], y->line, y->col);
    if (a->present)
      SAME(plan_knob_get(a, &plan_knobs[i]) == plan_knob_get(b, &plan_knobs[i]),
           "%s: knob %s: %d vs %d", what, plan_knobs[i].path, plan_knob_get(a, &plan_knobs[i]),
           plan_knob_get(b, &plan_knobs[i]));
  }
  if (a->present)
    SAME(memcmp(&a->dims, &b->dims, sizeof a->dims) == 0, "%s: record dims differ", what);
}

/* `b` (parsed) holds what `a` (built) does, tensor indices aside. */
static void same_ir(const char *what, const Ir *a, const Ir *b) {
  SAME(memcmp(&a->hw, &b->hw, sizeof a->hw) == 0, "%s: machine differs", what);
  SAME(memcmp(&a->prob, &b->prob, sizeof a->prob) == 0, "%s: problem differs", what);
  SAME(g_strcmp0(a->plan_file, b->plan_file) == 0, "%s: plan file %s vs %s", what, a->plan_file,
       b->plan_file);
  SAME(a->sms_used == b->sms_used, "%s: sms_used %d vs %d", what, a->sms_used, b->sms_used);
  same_record(what, &a->sched, &b->sched);
  SAME(a->events->len == b->events->len, "%s: %u vs %u events", what, a->events->len,
       b->events->len);
  for (guint e = 0; e < a->events->len; e++)
    SAME(strcmp(g_ptr_array_index(a->events, e), g_ptr_array_index(b->events, e)) == 0,
         "%s: event %u differs", what, e);
  SAME(a->tasks->len == b->tasks->len, "%s: %u vs %u tasks", what, a->tasks->len, b->tasks->len);
  for (guint k = 0; k <= a->tasks->len; k++) {
    g_autoptr(GPtrArray) ra = task_rfs(a, k < a->tasks->len ? (int)k : -1);
    g_autoptr(GPtrArray) rb = task_rfs(b, k < b->tasks->len ? (int)k : -1);
    SAME(ra->len == rb->len, "%s: task %u: %u vs %u RF tensors", what, k, ra->len, rb->len);
    for (guint i = 0; i < ra->len; i++)
      same_tensor(what, g_ptr_array_index(ra, i), g_ptr_array_index(rb, i));
    if (k == a->tasks->len) break;
    const IrTask *x = ir_task_at(a, (int)k), *y = ir_task_at(b, (int)k);
    SAME(strcmp(x->name, y->name) == 0 && x->wg == y->wg && x->stage == y->stage &&
             memcmp(&x->role, &y->role, sizeof x->role) == 0 && same_prov(x->prov, y->prov),
         "%s: task %s differs (wg, stage, role or provenance)", what, x->name);
    g_autofree char *sx = group_key(a, x->signals), *sy = group_key(b, y->signals);
    SAME(strcmp(sx, sy) == 0, "%s: task %s signals %s vs %s", what, x->name, sx, sy);
    guint nw = x->waits ? x->waits->len : 0;
    SAME(nw == (y->waits ? y->waits->len : 0), "%s: task %s: waits differ", what, x->name);
    for (guint w = 0; w < nw; w++) {
      g_autofree char *wx = group_key(a, g_array_index(x->waits, int, w));
      g_autofree char *wy = group_key(b, g_array_index(y->waits, int, w));
      SAME(strcmp(wx, wy) == 0, "%s: task %s waits %s vs %s", what, x->name, wx, wy);
    }
    SAME(x->ops->len == y->ops->len, "%s: task %s: %u vs %u ops", what, x->name, x->ops->len,
         y->ops->len);
    for (guint i = 0; i < x->ops->len; i++) {
      g_autofree char *w = g_strdup_printf("%s: task %s op %u", what, x->name, i);
      same_op(w, a, &g_array_index(x->ops, IrOp, i), b, &g_array_index(y->ops, IrOp, i), x->prov);
    }
  }
  g_autoptr(GPtrArray) ha = g_ptr_array_new(), hb = g_ptr_array_new();
  for (guint t = 0; t < a->tensors->len; t++)
    if (ir_tensor(a, (int)t)->home == HOME_HBM) g_ptr_array_add(ha, ir_tensor(a, (int)t));
  for (guint t = 0; t < b->tensors->len; t++)
    if (ir_tensor(b, (int)t)->home == HOME_HBM) g_ptr_array_add(hb, ir_tensor(b, (int)t));
  SAME(ha->len == hb->len, "%s: %u vs %u HBM tensors", what, ha->len, hb->len);
  for (guint i = 0; i < ha->len; i++)
    same_tensor(what, g_ptr_array_index(ha, i), g_ptr_array_index(hb, i));
}

/* ir_verify says the same of both: success, or the same message. */
static void same_verdict(const char *what, const Ir *a, const Ir *b, gboolean allocated) {
  g_autoptr(GError) ea = NULL;
  g_autoptr(GError) eb = NULL;
  gboolean oka = ir_verify(a, allocated, &ea), okb = ir_verify(b, allocated, &eb);
  ck_assert_msg(oka, "%s: the original IR does not verify: %s", what, ea->message);
  ck_assert_msg(okb, "%s: the parsed IR does not verify: %s", what, eb->message);
}

/* ------------------------------------------------------- round trips */

/* Every stage of the pipeline of one plan section: round trip, same IR,
 * same verdict; then the passes after each stage, run on its parsed IR,
 * end in the same IR and assembly as the pipeline. */
static void check_plan(const Plan *plan, ProblemKind kind) {
  g_autofree char *what = g_strdup_printf("%s --problem %s", plan->file, wl_problem_name(kind));
  const PlanProblem *pp = plan_problem(plan, kind);
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = ir_new(&plan->hw, &pp->dims, plan->file);
  ir_set_schedule(ir, pp);
  g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func(g_free);
  int npass = 0;
  gboolean allocated = FALSE;
  for (const PassDef *p = pass_table; p->name; p++, npass++) {
    ck_assert_msg(p->run(ir, &err), "%s: %s: %s", what, p->name, err ? err->message : "?");
    allocated |= p->run == pass_rf_alloc;
    g_autofree char *w = g_strdup_printf("%s after %s", what, p->name);
    g_autoptr(Ir) back = round_trip(w, ir);
    same_ir(w, ir, back);
    same_verdict(w, ir, back, allocated);
    g_ptr_array_add(texts, ir_print(ir));
  }
  g_autofree char *final_asm = be_emit(ir);
  const char *final = g_ptr_array_index(texts, npass - 1);
  for (int i = 0; i + 1 < npass; i++) {
    g_autofree char *w = g_strdup_printf("%s after %s", what, pass_table[i].name);
    g_autoptr(Ir) back = parse_ok(w, g_ptr_array_index(texts, i));
    for (int j = i + 1; j < npass; j++)
      ck_assert_msg(pass_table[j].run(back, &err), "%s, parsed, then %s: %s", w, pass_table[j].name,
                    err ? err->message : "?");
    g_autofree char *text = ir_print(back), *as = be_emit(back);
    if (strcmp(text, final) != 0) {
      g_autofree char *d = first_diff(final, text);
      ck_abort_msg("%s, parsed, then the rest of the passes: the final IR differs at %s", w, d);
    }
    ck_assert_msg(strcmp(as, final_asm) == 0, "%s, parsed, then the rest: the assembly differs", w);
  }
}

START_TEST(test_roundtrip_golden) {
  g_autoptr(GPtrArray) plans = golden_plans();
  ck_assert_msg(plans->len >= 4, "only %u good plans in tests/golden", plans->len);
  for (guint i = 0; i < plans->len; i++) {
    g_autoptr(Plan) plan = plan_file(g_ptr_array_index(plans, i));
    for (int k = PROB_D1; k <= PROB_P1; k++)
      if (plan_problem(plan, (ProblemKind)k)->present) check_plan(plan, (ProblemKind)k);
  }
}
END_TEST

START_TEST(test_roundtrip_baseline) {
  g_autoptr(Plan) plan = plan_file("plans/baseline.yaml");
  check_plan(plan, _i == 0 ? PROB_P1 : PROB_D1);
}
END_TEST

/* ------------------------------------------------ every op, by hand */

static IrOp *op3(Ir *ir, int task, IrOpKind k, IrView d, IrView a, IrView b) {
  IrOp *op = ir_emit(ir, task, k);
  op->d = d, op->a = a, op->b = b;
  return op;
}

/* Every op kind, modifier and operand form; RF tensors padded, in several
 * partitions, live from the WG's start, owned by no valid task; HBM views
 * inside a tensor with a row stride; tasks with and without a WG, role,
 * dependencies and provenance. */
static Ir *every_op(void) {
  Machine hw;
  Problem prob;
  sim_machine_default(&hw);
  hw.reduce_units = 1;
  wl_problem_default(&prob, PROB_P1);
  Ir *ir = ir_new(&hw, &prob, "hand.yaml");
  int a = ir_task(ir, "a.blk", 0, (IrProv){"p1.row_tile", 7, 0});
  int b = ir_task(ir, "b.tail", 3, (IrProv){NULL, 0, 0});
  int c = ir_task(ir, "c", -1, (IrProv){"p1.panels.w1", 0, 0});
  int pre = ir_task(ir, "a.pre", 1, (IrProv){"p1.row_tile", 7, 0});
  ir_task_at(ir, a)->wg = 5;
  ir_task_at(ir, pre)->wg = 5; /* after a on its WG: its live ranges shift */
  ir_task_at(ir, b)->wg = 3;
  ir_task_at(ir, c)->wg = 999; /* out of range: printed, counted apart    */
  IrRole r = ir_role(ROLE_ATT);
  r.seq = 0, r.head = 2, r.slice = 1, r.tile = 3;
  ir_task_at(ir, a)->role = r;
  r = ir_role(ROLE_W2);
  r.proj = PROJ_W2, r.kshard = 1, r.step = 4, r.layer = 0, r.panel = 7;
  ir_task_at(ir, b)->role = r;
  ir_task_at(ir, c)->role = ir_role(ROLE_PACER);
  int g0 = ir_group(ir, "h"), k0 = ir_group(ir, "k"), g1 = ir_group(ir, "h");
  (void)ir_group(ir, "k");
  ir_task_signals(ir, a, g1);
  ir_task_waits(ir, b, g0);
  ir_task_waits(ir, b, k0);
  ir_task_signals(ir, b, k0);
  int x = ir_tensor_rf(ir, a, "x", 32, 32);
  int y = ir_tensor_rf(ir, a, "y.pad", 256, 32); /* 2 partitions, uses 200 rows */
  ir_tensor(ir, y)->used_rows = 200;
  int s = ir_tensor_rf(ir, a, "s", 32, 1);
  int ga = ir_tensor_rf(ir, a, "l0.g", 1, 32);
  int gb = ir_tensor_rf(ir, b, "l0.g", 1, 32);
  int z = ir_tensor_rf(ir, b, "z", 32, 32);
  int w = ir_tensor_rf(ir, c, "w", 8, 8);
  int p = ir_tensor_rf(ir, pre, "p", 1, 32);
  int orphan = ir_tensor_rf(ir, a, "orphan", 4, 4);
  ir_tensor(ir, orphan)->task = 77;
  IrTensor *X = ir_tensor(ir, x), *Y = ir_tensor(ir, y), *Z = ir_tensor(ir, z);
  X->part = 0, X->nparts = 1, X->first_op = 0, X->last_op = 30;
  Y->part = 2, Y->nparts = 2, Y->first_op = 3, Y->last_op = 9;
  ir_tensor(ir, s)->part = 0, ir_tensor(ir, s)->nparts = 1, ir_tensor(ir, s)->part_off = 4032;
  ir_tensor(ir, gb)->part = 1, ir_tensor(ir, gb)->nparts = 1;
  ir_tensor(ir, gb)->first_op = 0, ir_tensor(ir, gb)->last_op = 4;
  Z->part = 4, Z->nparts = 1, Z->first_op = 0, Z->last_op = 2;
  ir_tensor(ir, p)->part = 3, ir_tensor(ir, p)->nparts = 1;
  ir_tensor(ir, p)->first_op = 0, ir_tensor(ir, p)->last_op = 40; /* "live start..L" */
  int xin = ir_tensor_hbm(ir, "x_in[0,0]", "x_in", 0, 64, 256, 256);
  int wq = ir_tensor_hbm(ir, "wqkv", "wqkv.l0", 1024, 256, 96, 768);
  int gin = ir_tensor_hbm(ir, "g", "ln1_g.l0", 0, 1, 256, 256);
  int scr = ir_tensor_hbm(ir, "scratch[2]", "scratch", 4096, 32, 32, 32);
  int h = ir_event(ir, "h");
  IrView none = ir_win(-1, 0, 0, 0, 0);
  IrOp *op = op3(ir, a, IR_LD, ir_all(ir, x), none, none);
  op->mem = ir_win(xin, 2, 32, 64, 32);
  op = op3(ir, a, IR_LD, ir_all(ir, ga), none, none);
  op->mem = ir_win(gin, 0, 1, 32, 32);
  op->mods = IR_MOD_MC;
  op->ntargets = 2;
  op->targets = g_new(int, 2);
  op->targets[0] = gb, op->targets[1] = ga;
  op = op3(ir, a, IR_LD, ir_win(y, 0, 32, 0, 32), none, none);
  op->mem = ir_win(wq, 1, 32, 8, 32);
  op->event = h; /* printable: an op prints any event it has */
  op3(ir, a, IR_MMA, ir_win(y, 0, 32, 0, 32), ir_all(ir, x), ir_all(ir, x))->mods = IR_MOD_Z | IR_MOD_T;
  op3(ir, a, IR_MMA, ir_win(y, 32, 32, 0, 32), ir_all(ir, x), ir_win(y, 0, 32, 0, 32));
  op3(ir, a, IR_MMA, ir_win(y, 64, 32, 0, 32), ir_all(ir, x), ir_all(ir, x))->mods = IR_MOD_Z;
  IrOpKind bin[] = {IR_VADD, IR_VSUB, IR_VMUL, IR_VMAX, IR_VMIN};
  for (unsigned i = 0; i < G_N_ELEMENTS(bin); i++)
    op3(ir, a, bin[i], ir_all(ir, x), ir_all(ir, x), ir_all(ir, s))->prov = (IrProv){"p1.panels.qkv", 0, 0};
  op3(ir, a, IR_VFMA, ir_all(ir, x), ir_all(ir, x), ir_all(ir, ga))->c = ir_all(ir, s);
  IrOpKind un[] = {IR_VCOPY, IR_VRSUM, IR_VRMAX, IR_SEXP, IR_STANH, IR_SRSQRT, IR_SRECIP};
  for (unsigned i = 0; i < G_N_ELEMENTS(un); i++)
    op3(ir, a, un[i], un[i] == IR_VRSUM || un[i] == IR_VRMAX ? ir_all(ir, s) : ir_all(ir, x),
        ir_all(ir, x), none)->prov = (IrProv){"p1.row_tile", 9, 0};
  /* immediates: each must come back bit for bit */
  static const float imms[] = {0.1f, 1e-5f, -0.0f, 0.0f, 1.0f / 3.0f, 0.03125f, 1e-45f,
                               1.17549435e-38f, 3.40282347e38f, -2.5e-7f, 16777217.0f, 123456.789f};
  for (unsigned i = 0; i < G_N_ELEMENTS(imms); i++)
    op3(ir, a, i % 2 ? IR_VMULI : IR_VADDI, ir_all(ir, x), ir_all(ir, x), none)->imm = imms[i];
  op3(ir, a, IR_VFILL, ir_all(ir, s), none, none)->imm = INFINITY;
  op3(ir, a, IR_VFILL, ir_all(ir, s), none, none)->imm = -INFINITY;
  op3(ir, a, IR_VFILL, ir_all(ir, s), none, none)->imm = NAN;
  op = op3(ir, a, IR_RED, ir_all(ir, s), ir_all(ir, s), none);
  op->event = h, op->n = 3;
  op = op3(ir, a, IR_ST, none, ir_win(x, 0, 16, 0, 32), none);
  op->mem = ir_win(scr, 16, 16, 0, 32);
  op = op3(ir, a, IR_ST, none, ir_all(ir, x), none);
  op->mem = ir_all(ir, z);
  op = ir_emit(ir, a, IR_SIG);
  op->event = h, op->n = 1;
  op = ir_emit(ir, b, IR_WAIT);
  op->event = h, op->n = INT64_C(1000000000000000000);
  op = ir_emit(ir, b, IR_WAITT);
  op->n = -5; /* printable */
  op3(ir, b, IR_VADD, ir_all(ir, z), ir_all(ir, z), ir_all(ir, gb));
  op = ir_emit(ir, c, IR_WAIT);
  op->event = 0, op->n = 2;
  op3(ir, c, IR_VFILL, ir_all(ir, w), none, none)->imm = 2.0f;
  op = op3(ir, pre, IR_LD, ir_all(ir, p), none, none);
  op->mem = ir_win(gin, 0, 1, 0, 32);
  op->prov = (IrProv){"p1.row_tile", 7, 0}; /* the task's: not printed */
  return ir;
}

START_TEST(test_every_op) {
  g_autoptr(Ir) ir = every_op();
  g_autoptr(Ir) back = round_trip("every op", ir);
  same_ir("every op", ir, back);
  /* what the printer shows of it */
  g_autofree char *text = ir_print(ir);
  static const char *const lines[] = {
      "task a.blk wg 5 stage 0 role att tile=3 seq=0 head=2 slice=1 signals h#1  ; p1.row_tile:7\n",
      ("task b.tail wg 3 stage 3 role w2 proj=w2 step=4 layer=0 panel=7 kshard=1 waits h#0, k#0 "
       "signals k#0  ; -\n"),
      "task c wg 999 stage -1 role pacer  ; p1.panels.w1\n",
      "  rf y.pad 256x32 (uses 200 rows) p2 (2 parts) live 3..9\n",
      "  rf s 32x1 p0+4032\n",
      "  rf p 1x32 p3 live start..2\n",
      "    0  LD x, hbm[x_in + 2304 stride 256]\n",
      "    1  LD.mc l0.g, hbm[ln1_g.l0 + 128 stride 256], {l0.g@b.tail, l0.g}\n",
      "    2  LD y.pad[0:32, :], hbm[wqkv.l0 + 4128 stride 768], ev.h\n",
      "    3  MMA.z.t y.pad[0:32, :], x, x\n",
      "   11  VEC.fma x, x, l0.g, s\n",
      "  ; p1.row_tile:9\n",
      " ST hbm[scratch + 6144], x[0:16, :]\n",
      " ST z@b.tail, x\n",
      " RED s, s, ev.h, 3\n",
      "WAIT ev.h, 1000000000000000000\n",
      "WAITT -5\n",
      "VEC.fill s, inf\n",
      "VEC.fill s, -inf\n",
      "VEC.addi x, x, 0.1\n",
      "VEC.muli x, x, 1e-05\n",
      "VEC.addi x, x, -0\n",
      "VEC.addi x, x, 1.4013e-45\n",
      "VEC.addi x, x, 16777216\n",
      "VEC.muli x, x, 1.1754944e-38\n",
      "VEC.addi x, x, 3.4028235e+38\n",
      "VEC.fill s, nan\n",
      "\nno task\n  rf orphan 4x4\n",
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(lines); i++)
    ck_assert_msg(strstr(text, lines[i]), "no '%s' in\n%s", lines[i], text);
  /* NaN keeps being NaN */
  const IrTask *t = ir_task_at(back, 0);
  gboolean nan_seen = FALSE;
  for (guint i = 0; i < t->ops->len; i++)
    nan_seen |= isnan(g_array_index(t->ops, IrOp, i).imm);
  ck_assert(nan_seen);
}
END_TEST

/* ------------------------------------------------------ hand-written */

static const char hand[] =
    "; RUN: a comment line, as tests/passes puts its directives\n"
    ".machine sms=2 wgs_per_sm=2\n"
    ".problem p1 d_model=32 heads=1 d_ff=32 layers=1 seqs=1 rows=32\n"
    "sms_used 1\n"
    "\n"
    "schedule\n"
    "  p1.power.bucket_bytes = 4096  ; line 9:19\n"
    "  p1.power.event_interval = 100\n"
    "\n"
    "task t0 wg - stage 0  ; p1.power.bucket_bytes:9\n"
    "  rf x 32x32\n"
    "    0  LD x, hbm[x_in]  ; p1.power.bucket_bytes:8\n"
    "    1  WAIT ev.in, 1\n"
    "; a comment between the ops\n"
    "    2  ST hbm[scratch], x\n"
    "hbm x_in = x_in 32x32 stride 32\n"
    "hbm s = scratch 32x32 stride 32\n";

START_TEST(test_hand_written) {
  g_autoptr(Ir) ir = parse_ok("hand.ir", hand);
  Machine m;
  sim_machine_default(&m);
  m.sms = 2, m.wgs_per_sm = 2;
  ck_assert(memcmp(&ir->hw, &m, sizeof m) == 0);
  ck_assert_int_eq(ir->prob.d_model, 32);
  ck_assert_ptr_null(ir->plan_file);
  /* the record: the knobs given, the others at their defaults, unlisted */
  const Schedule *s = &ir->sched;
  ck_assert_int_eq(s->bucket_bytes, 4096);
  ck_assert_int_eq(s->event_interval, 100);
  ck_assert_int_eq(s->pacing_wg, -1);
  ck_assert_int_eq(s->panel[PROJ_QKV], 32);
  ck_assert_int_eq(s->sms_used, 1); /* from "sms_used 1" */
  ck_assert_int_eq(ir->sms_used, 1);
  SchedLoc l = sched_loc(s, "power.bucket_bytes");
  ck_assert_str_eq(l.path, "p1.power.bucket_bytes");
  ck_assert_int_eq(l.line, 9);
  ck_assert_int_eq(l.col, 19);
  ck_assert_int_eq(sched_loc(s, "power.event_interval").line, 0);
  ck_assert_ptr_null(sched_loc(s, "power.pacing_wg").path);
  /* provenance: the column from the record when the line is the same */
  const IrTask *t = ir_task_at(ir, 0);
  ck_assert_int_eq(t->prov.col, 19);
  ck_assert_ptr_eq(t->prov.knob, l.path);
  const IrOp *op = &g_array_index(t->ops, IrOp, 0);
  ck_assert_int_eq(op->prov.line, 8);
  ck_assert_int_eq(op->prov.col, 0);
  /* the only event is "in" */
  ck_assert_int_eq(ir->events->len, 1);
  ck_assert_int_eq(g_array_index(t->ops, IrOp, 1).event, 0);
  g_autoptr(GError) err = NULL;
  ck_assert_msg(ir_verify(ir, FALSE, &err), "%s", err ? err->message : "");
  /* printed in full */
  g_autofree char *text = ir_print(ir);
  ck_assert_msg(g_str_has_prefix(text, "; tcc-gen IR of -\n.machine sms=2 wgs_per_sm=2 rf_kib=64 "),
                "%s", text);
  ck_assert_msg(strstr(text, "\nschedule\n  p1.power.bucket_bytes = 4096  ; line 9:19\n"
                             "  p1.power.event_interval = 100  ; default\n\nevent in\n"),
                "%s", text);
}
END_TEST

/* ------------------------------------------------------------ errors */

#define HDR ".machine sms=2 wgs_per_sm=2\n.problem p1 d_model=32 heads=1 d_ff=32 layers=1 seqs=1 rows=32\n"
#define TASK HDR "event in\nevent h\ntask t wg 0 stage 0  ; -\n  rf x 32x32\n  rf g 1x32\n"
#define HBM "hbm x_in = x_in 32x32 stride 32\nhbm g = ln1_g.l0 1x32 stride 32\n"

typedef struct Bad {
  const char *what, *text, *msg;
} Bad;

static const Bad bad[] = {
    {"empty text", "", "t.ir:1:1: error: no .machine line"},
    {"no header", "task t wg 0 stage 0\n",
     "t.ir:1:1: error: expected '.machine' (the IR starts with its header), got 'task'"},
    {"no .problem", ".machine\n", "t.ir:1:1: error: no .problem line"},
    {"machine key", ".machine sms=2 fast=1\n", "t.ir:1:16: error: unknown machine parameter 'fast'"},
    {"machine range", ".machine sms=100\n",
     "t.ir:1:10: error: sms=100 out of range 1..64 (streaming multiprocessors)"},
    {"machine syntax", ".machine sms 2\n",
     "t.ir:1:10: error: expected a machine parameter KEY=VALUE, got 'sms'"},
    {"problem kind", ".machine\n.problem x1\n",
     "t.ir:2:10: error: expected the problem kind d1 or p1, got 'x1'"},
    {"problem check", ".machine\n.problem p1 d_model=64 heads=1\n",
     "t.ir:2:1: error: d_model=64 with heads=1: head_dim must be 32 (d_model = 32*heads)"},
    {"second header", HDR ".machine\n", "t.ir:3:1: error: a second .machine (the first is on line 1)"},
    {"unknown line", HDR "tasks t\n",
     "t.ir:3:1: error: unknown line starting with 'tasks' (expected .machine, .problem, sms_used, "
     "schedule, event, task, no task, hbm or a comment)"},
    {"indented at top", HDR "  rf x 1x32\n",
     "t.ir:3:3: error: an indented line outside a task or the schedule"},
    {"knob unknown", HDR "schedule\n  p1.power.buckets = 2\n",
     "t.ir:4:3: error: 'p1.power.buckets' is not a knob of a p1 schedule"},
    {"knob of d1", HDR "schedule\n  d1.sms_used = 2\n",
     "t.ir:4:3: error: 'd1.sms_used' is not a knob of a p1 schedule"},
    {"knob twice", HDR "schedule\n  p1.sms_used = 2\n  p1.sms_used = 2\n",
     "t.ir:5:3: error: knob 'p1.sms_used' is given twice"},
    {"knob enum", HDR "schedule\n  p1.layout = diagonal\n",
     "t.ir:4:15: error: 'diagonal' is not one of row, packed, packed_x (knob 'p1.layout')"},
    {"knob bool", HDR "schedule\n  p1.multicast.qkv = yes\n",
     "t.ir:4:22: error: 'yes' is not true or false (knob 'p1.multicast.qkv')"},
    {"knob int", HDR "schedule\n  p1.row_tile = 3x\n",
     "t.ir:4:18: error: '3x' is not an integer (knob 'p1.row_tile')"},
    {"knob place", HDR "schedule\n  p1.row_tile = 32  ; here\n",
     "t.ir:4:23: error: expected 'line LINE:COL', 'default' or 'power.fit' after ';', got 'here'"},
    {"event twice", HDR "event in\nevent in\n", "t.ir:4:7: error: event 'in' is declared twice"},
    {"group twice", HDR "group w  ; p1.sms_used\ngroup w  ; p1.sms_used\n",
     "t.ir:4:7: error: group 'w' is declared twice"},
    {"group no prov", HDR "group w\n",
     "t.ir:3:8: error: expected '; KNOB[:LINE]', the provenance of the group's family, got the end of the line"},
    {"group late", HDR "task t wg 0 stage 0 signals w#0\ngroup w  ; p1.sms_used\n",
     "t.ir:4:7: error: group 'w' is declared after a task that uses it"},
    {"task twice", HDR "task t wg 0 stage 0\ntask t wg 1 stage 0\n",
     "t.ir:4:6: error: task 't' is defined twice"},
    {"task wg", HDR "task t wg x stage 0\n", "t.ir:3:11: error: expected a WG number or '-', got 'x'"},
    {"role", HDR "task t wg 0 stage 0 role boss\n",
     "t.ir:3:26: error: unknown role 'boss' (one of none, ln1, qkv, att, wo, ln2, w1, w2, pacer, preload, relay)"},
    {"role coordinate", HDR "task t wg 0 stage 0 role qkv row=1\n",
     "t.ir:3:30: error: unknown role coordinate 'row' (proj, step, layer, panel, tile, seq, head, "
     "slice, kshard)"},
    {"group", HDR "task t wg 0 stage 0 waits qkv\n",
     "t.ir:3:27: error: expected a group FAMILY#N, got 'qkv'"},
    {"rf twice", TASK "  rf x 1x1\n", "t.ir:8:6: error: RF tensor 'x' is defined twice in task 't'"},
    {"rf shape", TASK "  rf y 32\n", "t.ir:8:10: error: expected 'x' in the shape ROWSxCOLS, got the end of the line"},
    {"rf trailing", TASK "  rf y 1x1 q0\n", "t.ir:8:12: error: unexpected 'q0' after the RF tensor"},
    {"op number", TASK "    1  SIG ev.h, 1\n", "t.ir:8:5: error: op 1 of task 't' where op 0 is due"},
    {"op mnemonic", TASK "    0  VEC.nop x, x\n" HBM, "t.ir:8:8: error: unknown op 'VEC.nop'"},
    {"op modifier", TASK "    0  MMA.q x, x, x\n" HBM,
     "t.ir:8:11: error: unknown or repeated modifier '.q' of MMA (.z, .t, .mc)"},
    {"op modifier twice", TASK "    0  MMA.z.z x, x, x\n" HBM,
     "t.ir:8:13: error: unknown or repeated modifier '.z' of MMA (.z, .t, .mc)"},
    {"too few operands", TASK "    0  VEC.add x, x\n" HBM,
     "t.ir:8:20: error: VEC.add takes d, a, b: expected its operand b, got the end of the line"},
    {"too many operands", TASK "    0  VEC.copy x, x, x\n" HBM,
     "t.ir:8:21: error: VEC.copy takes d, a: unexpected ', x' after them"},
    {"unknown tensor", TASK "    0  VEC.copy x, y\n" HBM, "t.ir:8:20: error: no RF tensor 'y' in task 't'"},
    {"unknown task", TASK "    0  ST x@u, x\n" HBM, "t.ir:8:13: error: unknown task 'u'"},
    {"unknown event", TASK "    0  SIG ev.hh, 1\n" HBM,
     "t.ir:8:12: error: unknown event 'ev.hh' (declare it with an event line)"},
    {"HBM where RF", TASK "    0  VEC.copy x, hbm[x_in]\n" HBM,
     "t.ir:8:20: error: operand a is an HBM operand; it must be an RF tensor"},
    {"no HBM tensor", TASK "    0  LD x, hbm[x_in + 64]\n" HBM,
     "t.ir:8:14: error: no hbm tensor holds hbm[x_in + 64] as a 32x32 window (the hbm lines list "
     "the tensors)"},
    {"HBM stride", TASK "    0  LD g, hbm[ln1_g.l0 stride 64]\n" HBM,
     "t.ir:8:14: error: no hbm tensor holds hbm[ln1_g.l0 stride 64] as a 1x32 window (the hbm "
     "lines list the tensors)"},
    {"window", TASK "    0  VEC.copy x[0:16 :], x\n" HBM,
     "t.ir:8:24: error: expected ',' between the window's rows and cols, got ':]'"},
    {"immediate", TASK "    0  VEC.muli x, x, half\n" HBM,
     "t.ir:8:23: error: expected an immediate (a float), got 'half'"},
    {"count range", TASK "    0  WAITT 99999999999999999999\n" HBM,
     "t.ir:8:14: error: a count 99999999999999999999 out of range "
     "-9223372036854775808..9223372036854775807"},
    {"targets", TASK "    0  LD.mc g, hbm[ln1_g.l0], {g, x[0:1, :]}\n" HBM,
     "t.ir:8:36: error: an LD.mc target is a whole tensor (no window but its used rows)"},
    {"provenance", TASK "    0  SIG ev.h, 1  ; p1.row_tile:x\n" HBM,
     "t.ir:8:35: error: expected the plan line after 'KNOB:', got 'x'"},
    {"hbm line", HDR "hbm x = x_in 32x32\n",
     "t.ir:3:19: error: expected 'stride' after the shape, got the end of the line"},
    {"NUL byte", HDR "event \0in\n", "t.ir:3:7: error: a NUL byte in the text"},
};

START_TEST(test_errors) {
  const Bad *b = &bad[_i];
  gsize len = strlen(b->text);
  if (strcmp(b->what, "NUL byte") == 0) len += 4; /* past the NUL */
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = ir_parse("t.ir", b->text, len, &err);
  ck_assert_msg(!ir, "%s: parsed", b->what);
  ck_assert_msg(g_error_matches(err, IR_ERROR, IR_ERROR_PARSE), "%s: wrong error domain", b->what);
  ck_assert_msg(strcmp(err->message, b->msg) == 0, "%s:\n  got  %s\n  want %s", b->what,
                err->message, b->msg);
}
END_TEST

/* An LD.mc with more targets than IrOp.ntargets holds (IR_MAX_TARGETS):
 * refused with its count, at the end of the list, never truncated. */
/* ir_verify_progress: the program's events let every WG run to its end.
 * A WAIT for more than all the SIGs of its event, or for a SIG that comes
 * after it in the same WG, never passes (a deadlock the pipeline
 * refuses); as many as signalled before is fine; the host's `in` is
 * always released. */
START_TEST(test_verify_progress) {
  g_autoptr(Ir) ok = parse_ok("ok.ir", TASK "    0  SIG ev.h, 1\n    1  SIG ev.h, 2\n    2  WAIT ev.h, 3\n"
                                           "    3  WAIT ev.in, 5\n" HBM);
  g_autoptr(GError) err = NULL;
  ck_assert_msg(ir_verify_progress(ok, &err), "%s", err ? err->message : "");
  g_autoptr(Ir) bad = parse_ok("bad.ir", TASK "    0  SIG ev.h, 1\n    1  SIG ev.h, 2\n    2  WAIT ev.h, 4\n" HBM);
  ck_assert(!ir_verify_progress(bad, &err));
  ck_assert_str_eq(err->message, "wg 0, task 't' op 2: WAIT ev.h, 4 never passes: the program signals "
                                 "ev.h only 3 times before every WG is stuck (a deadlock)");
  g_clear_error(&err);
  ck_assert(!ir_verify(bad, TRUE, &err)); /* part of the allocated IR's checks */
  g_clear_error(&err);
  /* enough SIGs in all, but the one the WAIT needs comes after it */
  g_autoptr(Ir) late = parse_ok("late.ir", TASK "    0  WAIT ev.h, 1\n    1  SIG ev.h, 1\n" HBM);
  ck_assert(!ir_verify_progress(late, &err));
  ck_assert_msg(strstr(err->message, "op 0: WAIT ev.h, 1 never passes") != NULL, "%s", err->message);
}
END_TEST

/* ir_verify_progress with RED, as tcc-sim runs its rounds: a RED goes on,
 * its round completes at the N-th contribution (+1 on its event), and until
 * then the contributor stalls at a SIG, at the end of its program and at
 * any op touching its d.  Two WGs that all-reduce two groups in opposite
 * orders and read each sum at once deadlock (each waits for the other's
 * second contribution); in the same order they finish.  Two contributions
 * from one WG (a panel's two K shards placed together) never complete a
 * round of 2; a SIG behind an open round is stuck when the other
 * contributor waits for that SIG; a round still open at the end of the
 * program is stuck there; a RED's event counts the rounds. */
#define RHDR ".machine sms=1 wgs_per_sm=2 reduce=1\n" \
             ".problem p1 d_model=32 heads=1 d_ff=32 layers=1 seqs=1 rows=32\n" \
             "event in\nevent r1\nevent r2\nevent h\n"
#define RTASK(name, wg) "task " name " wg " wg " stage 0\n  rf a 1x32\n  rf s 1x32\n  rf u 1x32\n" \
                        "    0  LD a, hbm[ln1_g.l0]\n"
#define RHBM "hbm g = ln1_g.l0 1x32 stride 32\n"

static void progress_fails(const char *what, const char *text, const char *want) {
  g_autoptr(Ir) ir = parse_ok(what, text);
  g_autoptr(GError) err = NULL;
  ck_assert_msg(!ir_verify_progress(ir, &err), "%s: passed", what);
  ck_assert_msg(strstr(err->message, want) != NULL, "%s:\n  got  %s\n  want ...%s...", what, err->message,
                want);
}

START_TEST(test_verify_progress_red) {
  g_autoptr(GError) err = NULL;
  /* the same order on both WGs: each sum read at once, both rounds complete */
  g_autoptr(Ir) same = parse_ok("same.ir", RHDR
      RTASK("t0", "0") "    1  RED s, a, ev.r1, 2\n    2  VEC.copy u, s\n    3  RED s, a, ev.r2, 2\n"
                       "    4  VEC.copy u, s\n    5  WAIT ev.r1, 1\n    6  WAIT ev.r2, 1\n"
      RTASK("t1", "1") "    1  RED s, a, ev.r1, 2\n    2  VEC.copy u, s\n    3  RED s, a, ev.r2, 2\n"
                       "    4  VEC.copy u, s\n"
      RHBM);
  ck_assert_msg(ir_verify_progress(same, &err), "%s", err ? err->message : "");
  /* a SIG after a round the other WG completes without waiting for it */
  g_autoptr(Ir) sig_ok = parse_ok("sig_ok.ir", RHDR
      RTASK("t0", "0") "    1  RED s, a, ev.r1, 2\n    2  SIG ev.h, 1\n"
      RTASK("t1", "1") "    1  RED s, a, ev.r1, 2\n    2  WAIT ev.h, 1\n"
      RHBM);
  ck_assert_msg(ir_verify_progress(sig_ok, &err), "%s", err ? err->message : "");
  /* opposite orders: wg 0 reads r1's sum before it contributes to r2, wg 1
   * r2's before r1 */
  progress_fails("crossed.ir", RHDR
      RTASK("t0", "0") "    1  RED s, a, ev.r1, 2\n    2  VEC.copy u, s\n    3  RED s, a, ev.r2, 2\n"
      RTASK("t1", "1") "    1  RED s, a, ev.r2, 2\n    2  VEC.copy u, s\n    3  RED s, a, ev.r1, 2\n"
      RHBM,
      "wg 0, task 't0' op 2: waits for RED round ev.r1 (1 of 2 contributions), which never completes");
  /* both contributions from one WG (its second waits for the round) */
  progress_fails("one_wg.ir", RHDR
      RTASK("t0", "0") "    1  RED s, a, ev.r1, 2\n    2  VEC.copy u, s\n"
      RTASK("t1", "0") "    1  RED s, a, ev.r1, 2\n"
      RHBM,
      "wg 0, task 't0' op 2: waits for RED round ev.r1 (1 of 2 contributions)");
  /* a SIG held by the round, whose other contributor waits for the SIG */
  progress_fails("sig.ir", RHDR
      RTASK("t0", "0") "    1  RED s, a, ev.r1, 2\n    2  SIG ev.h, 1\n"
      RTASK("t1", "1") "    1  WAIT ev.h, 1\n    2  RED s, a, ev.r1, 2\n"
      RHBM,
      "wg 0, task 't0' op 2: waits for RED round ev.r1 (1 of 2 contributions)");
  /* a round nobody else joins: stuck at the end of the program */
  progress_fails("end.ir", RHDR RTASK("t0", "0") "    1  RED s, a, ev.r1, 2\n" RHBM,
                 "wg 0, the end of its program (after task 't0'): waits for RED round ev.r1 (1 of 2 "
                 "contributions)");
  /* a RED's event counts its rounds: a WAIT for a second round never passes */
  progress_fails("count.ir", RHDR
      RTASK("t0", "0") "    1  RED s, a, ev.r1, 2\n    2  WAIT ev.r1, 2\n"
      RTASK("t1", "1") "    1  RED s, a, ev.r1, 2\n"
      RHBM,
      "wg 0, task 't0' op 2: WAIT ev.r1, 2 never passes: the program signals ev.r1 only 1 times");
}
END_TEST

START_TEST(test_too_many_targets) {
  g_autoptr(GString) t = g_string_new(TASK "    0  LD.mc g, hbm[ln1_g.l0], {g");
  gsize col = t->len - strlen(TASK);
  for (int i = 0; i < IR_MAX_TARGETS; i++) g_string_append(t, ", g");
  g_string_append(t, "}\n" HBM);
  col += 3 * (gsize)IR_MAX_TARGETS + 2;
  g_autoptr(GError) err = NULL;
  g_autoptr(Ir) ir = ir_parse("t.ir", t->str, t->len, &err);
  ck_assert(!ir);
  g_autofree char *want = g_strdup_printf("t.ir:8:%zu: error: LD.mc has %d targets; at most %d", col,
                                          IR_MAX_TARGETS + 1, IR_MAX_TARGETS);
  ck_assert_str_eq(err->message, want);
}
END_TEST

Suite *suite_parse(void) {
  Suite *s = suite_create("parse");
  TCase *tc = tcase_create("roundtrip");
  tcase_set_timeout(tc, 1800); /* the baseline P1, every stage, under ASan */
  tcase_add_test(tc, test_roundtrip_golden);
  tcase_add_loop_test(tc, test_roundtrip_baseline, 0, 2);
  suite_add_tcase(s, tc);
  tc = tcase_create("text");
  tcase_add_test(tc, test_every_op);
  tcase_add_test(tc, test_hand_written);
  tcase_add_loop_test(tc, test_errors, 0, G_N_ELEMENTS(bad));
  tcase_add_test(tc, test_too_many_targets);
  tcase_add_test(tc, test_verify_progress);
  tcase_add_test(tc, test_verify_progress_red);
  suite_add_tcase(s, tc);
  return s;
}
