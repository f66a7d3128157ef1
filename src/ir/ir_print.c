/* ir_print.c - the text form of the IR (tcc-gen --emit=ir, --dump-after).
 *
 * Deterministic and diff-friendly: everything is printed in creation order
 * (events, tasks, each task's RF tensors and ops, then the HBM tensors), by
 * name, never by pointer or hash order.  The format:
 *
 *   ; tcc-gen IR of plans/base.yaml
 *   .machine sms=16 wgs_per_sm=4 ...
 *   .problem p1 d_model=32 ...
 *   sms_used 16
 *
 *   schedule                               (the record: every knob of the
 *     p1.problem.d_model = 32  ; line 3:14  section, its value and place)
 *     p1.sms_used = 16  ; default
 *
 *   event in
 *   event h
 *
 *   task s0.blk wg 0 stage 0  ; p1.row_tile:7
 *     rf x 32x32 p0 live 0..4               (in this task's op numbers)
 *     rf w 64x32 p2 (2 parts) live 1..2
 *       0  LD x, hbm[x_in]
 *       1  LD w, hbm[wqkv.l0 + 256 stride 96]
 *       2  MMA.z acc, x, w[0:32, :]  ; p1.panels.qkv:12 chunk 0
 *       3  ST y@s1.tail, acc
 *       4  LD.mc l0.g, hbm[ln1_g.l0], {l0.g@s1.tail, l0.g}
 *
 *   hbm x_in[0,0] = x_in 32x32 stride 32
 *
 * Operands: an RF view is the tensor name plus a window when it is not the
 * whole tensor (":" for a whole side), "@task" when the tensor belongs to
 * another task (remote ST, LD.mc targets); an HBM view is its first byte
 * and row stride ("stride" only when the rows are not contiguous).  Op
 * numbers are per task (the verifier's "op N").  An op's comment shows its provenance when it
 * differs from its task's.  RF tensors show their placement and live range once
 * rf_alloc has set them.  The printer never fails: invalid indices print as '?N' so that a broken
 * IR can still be dumped and read.
 */
#include "ir.h"
#include "text_escape.h"

/* A float as the assembler reads it back: the shortest of "%.6g".."%.9g"
 * that parses to the same FP32 value ("1e-05", not "9.99999975e-06"; "%.9g"
 * always round-trips).  g_ascii_formatd ignores the locale. */
static void put_float(GString *s, float f) {
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  static const char *const fmts[] = {"%.6g", "%.7g", "%.8g", "%.9g"};
  for (unsigned i = 0; i < G_N_ELEMENTS(fmts); i++) {
    g_ascii_formatd(buf, sizeof buf, fmts[i], (double)f);
    if ((float)g_ascii_strtod(buf, NULL) == f) break;
  }
  g_string_append(s, buf);
}

/* A decimal integer (the hot path: no printf). */
static void put_int(GString *s, int64_t v) {
  char buf[IR_INT_CHARS];
  gsize n;
  const char *q = ir_int_text(buf, v, &n);
  g_string_append_len(s, q, (gssize)n);
}

/* One side of a window: ":" when it spans the whole dimension. */
static void put_span(GString *s, int lo, int n, int full) {
  if (lo == 0 && n == full) {
    g_string_append_c(s, ':');
    return;
  }
  put_int(s, lo);
  g_string_append_c(s, ':');
  put_int(s, lo + n);
}

/* "hbm[SYM + BYTES stride S]": the view's first byte and the row stride
 * (omitted when the rows are contiguous, as in the assembly). */
static void put_hbm(GString *s, const IrTensor *x, IrView v) {
  uint64_t off = x->offset + 4ull * ((uint64_t)v.r0 * (uint64_t)x->stride + (uint64_t)v.c0);
  g_string_append(s, "hbm[");
  g_string_append(s, x->sym ? x->sym : "?");
  if (off) {
    g_string_append(s, " + ");
    put_int(s, (int64_t)off);
  }
  if (x->stride != v.cols) {
    g_string_append(s, " stride ");
    put_int(s, x->stride);
  }
  g_string_append_c(s, ']');
}

/* An operand (see ir_view_str) appended to s. */
static void put_view(GString *s, const Ir *ir, int task, IrView v) {
  if (v.t < 0 || (guint)v.t >= ir->tensors->len) {
    g_string_append_printf(s, "?%d", v.t);
    return;
  }
  const IrTensor *x = ir_tensor(ir, v.t);
  if (x->home == HOME_HBM) {
    put_hbm(s, x, v);
    return;
  }
  g_string_append(s, x->name);
  if (v.r0 != 0 || v.rows != x->rows || v.c0 != 0 || v.cols != x->cols) {
    g_string_append_c(s, '[');
    put_span(s, v.r0, v.rows, x->rows);
    g_string_append(s, ", ");
    put_span(s, v.c0, v.cols, x->cols);
    g_string_append_c(s, ']');
  }
  if (task >= 0 && x->task != task) {
    gboolean ok = x->task >= 0 && (guint)x->task < ir->tasks->len;
    g_string_append_c(s, '@');
    if (ok)
      g_string_append(s, ir_task_at(ir, x->task)->name);
    else
      g_string_append_printf(s, "?%d", x->task);
  }
}

char *ir_view_str(const Ir *ir, int task, IrView v) {
  GString *s = g_string_new(NULL);
  put_view(s, ir, task, v);
  return g_string_free(s, FALSE);
}

/* "knob:line", or just the knob for a default (line 0). */
static void put_prov(GString *s, IrProv p) {
  g_string_append(s, p.knob ? p.knob : "-");
  if (p.line > 0) {
    g_string_append_c(s, ':');
    put_int(s, p.line);
  }
}

static void put_event(GString *s, const Ir *ir, int e) {
  g_string_append(s, "ev.");
  if (e >= 0 && (guint)e < ir->events->len)
    g_string_append(s, g_ptr_array_index(ir->events, e));
  else
    g_string_append_printf(s, "?%d", e);
}

/* The mnemonic with its modifiers: "MMA.z.t", "LD.mc". */
static void put_mnemonic(GString *s, const IrOp *op) {
  if ((unsigned)op->kind >= IR__COUNT) {
    g_string_append_printf(s, "?op%d", (int)op->kind);
    return;
  }
  g_string_append(s, ir_op_mnemonic[op->kind]);
  if (op->mods & IR_MOD_Z) g_string_append(s, ".z");
  if (op->mods & IR_MOD_T) g_string_append(s, ".t");
  if (op->mods & IR_MOD_MC) g_string_append(s, ".mc");
  if (op->mods & IR_MOD_CAND) g_string_append(s, ".cand");
}

/* ", {x@s1, x}": the LD.mc destination tensors (@task unless the op's). */
static void put_targets(GString *s, const Ir *ir, int task, const IrOp *op) {
  g_string_append(s, ", {");
  for (int i = 0; i < op->ntargets; i++) {
    int t = op->targets[i];
    if (i) g_string_append(s, ", ");
    if (t >= 0 && (guint)t < ir->tensors->len)
      put_view(s, ir, task, ir_all(ir, t));
    else
      g_string_append_printf(s, "?%d", t);
  }
  g_string_append_c(s, '}');
}

/* The operands of an op in assembly order (docs/machine.md §3). */
static void put_operands(GString *s, const Ir *ir, int task, const IrOp *op) {
  IrView c = ir_op_c(op);
  const IrView *vs[] = {&op->d, &op->a, &op->b, &c};
  gboolean first = TRUE;
  if (op->kind == IR_ST) {
    put_view(s, ir, task, op->mem);
    first = FALSE;
  }
  for (int i = 0; i < 4; i++) {
    if (vs[i]->t < 0 && !(op->kind == IR_ST && i == 1)) continue;
    if (!first) g_string_append(s, ", ");
    put_view(s, ir, task, *vs[i]);
    first = FALSE;
  }
  if (op->kind == IR_LD) {
    g_string_append(s, ", ");
    put_view(s, ir, task, op->mem);
    if (op->mods & IR_MOD_MC) put_targets(s, ir, task, op);
  }
  if (op->kind == IR_VMULI || op->kind == IR_VADDI || op->kind == IR_VFILL) {
    g_string_append(s, ", ");
    put_float(s, op->imm);
  }
  if (op->event >= 0 || op->kind == IR_SIG || op->kind == IR_WAIT || op->kind == IR_RED) {
    g_string_append(s, first ? "" : ", ");
    put_event(s, ir, op->event);
    first = FALSE;
  }
  if (op->kind == IR_SIG || op->kind == IR_WAIT || op->kind == IR_RED || op->kind == IR_WAITT) {
    g_string_append(s, first ? "" : ", ");
    put_int(s, op->n);
  }
}

static gboolean same_prov(IrProv a, IrProv b) {
  return a.line == b.line && g_strcmp0(a.knob, b.knob) == 0;
}

/* "  12  VEC.add x, x, y  ; knob:line" */
static void put_op(GString *s, const Ir *ir, int task, int i, const IrOp *op) {
  const IrTask *tk = ir_task_at(ir, task);
  static const char pad[] = "   ";
  int digits = i < 10 ? 1 : i < 100 ? 2 : 3;
  g_string_append(s, "  ");
  g_string_append_len(s, pad, 3 - digits); /* "%3d" */
  put_int(s, i);
  g_string_append(s, "  ");
  put_mnemonic(s, op);
  g_string_append_c(s, ' ');
  put_operands(s, ir, task, op);
  gboolean prov = op->prov.knob && !same_prov(op->prov, tk->prov);
  if (prov) {
    g_string_append(s, "  ; ");
    put_prov(s, op->prov);
  }
  g_string_append_c(s, '\n');
}

/* "  rf NAME RxC [(uses U rows)] [pP[+OFF] [(N parts)]] [live F..L]": the live range (set
 * by rf_alloc over the WG's whole op sequence) is shown in the task's own op
 * numbers (`base` = the WG op number of the task's op 0); a tensor written
 * by another WG may be live from before the task: from the WG's start
 * ("live start..L") or from N ops before the task's op 0 ("live -N..L"). */
static void put_rf(GString *s, const IrTensor *x, int base) {
  g_string_append_printf(s, "  rf %s %dx%d", x->name, x->rows, x->cols);
  if (x->used_rows != x->rows) g_string_append_printf(s, " (uses %d rows)", x->used_rows);
  if (x->part >= 0) {
    g_string_append_printf(s, " p%d", x->part);
    if (x->part_off) g_string_append_printf(s, "+%d", x->part_off);
    if (x->nparts > 1) g_string_append_printf(s, " (%d parts)", x->nparts);
  }
  if (x->first_op > 0 || (x->first_op == 0 && base == 0))
    g_string_append_printf(s, " live %d..%d", x->first_op - base, x->last_op - base);
  else if (x->first_op == 0)
    g_string_append_printf(s, " live start..%d", x->last_op - base);
  g_string_append_c(s, '\n');
}

/* " role qkv layer=1 proj=qkv panel=3 tile=0": the role's kind and the
 * coordinates that apply; nothing for ROLE_NONE. */
static void put_role(GString *s, const IrRole *r) {
  if (r->kind <= ROLE_NONE || r->kind >= ROLE__COUNT) return;
  g_string_append_printf(s, " role %s", ir_role_name[r->kind]);
  const struct {
    const char *name;
    int v;
  } c[] = {{"step", r->step}, {"layer", r->layer}, {"panel", r->panel}, {"tile", r->tile},
           {"seq", r->seq},   {"head", r->head},   {"slice", r->slice}, {"kshard", r->kshard}};
  if (r->proj >= 0 && r->proj < PROJ__COUNT) g_string_append_printf(s, " proj=%s", sched_proj_name[r->proj]);
  for (unsigned i = 0; i < G_N_ELEMENTS(c); i++)
    if (c[i].v >= 0) g_string_append_printf(s, " %s=%d", c[i].name, c[i].v);
}

/* A task: its header line, its RF tensors (creation order), its ops. */
/* A group as "FAMILY#N": the N-th group (from 0) of its event's family. */
static void put_group(GString *s, const Ir *ir, const int *ord, int g) {
  if (g < 0 || (guint)g >= ir->groups->len) {
    g_string_append_printf(s, "?%d", g);
    return;
  }
  const IrGroup *grp = g_ptr_array_index(ir->groups, g);
  g_string_append_printf(s, "%s#%d", grp->event, ord[g]);
}

/* " waits qkv_l0#1, x#0 signals att_l0#1": the dependencies that the sync
 * pass has not turned into events yet. */
static void put_deps(GString *s, const Ir *ir, const int *ord, const IrTask *tk) {
  for (guint w = 0; tk->waits && w < tk->waits->len; w++) {
    g_string_append(s, w ? ", " : " waits ");
    put_group(s, ir, ord, g_array_index(tk->waits, int, w));
  }
  if (tk->signals >= 0) {
    g_string_append(s, " signals ");
    put_group(s, ir, ord, tk->signals);
  }
}

static void put_task(GString *s, const Ir *ir, int k, const GArray *rfs, int base, const int *ord) {
  const IrTask *tk = ir_task_at(ir, k);
  g_string_append_printf(s, "\ntask %s wg ", tk->name);
  if (tk->wg >= 0)
    g_string_append_printf(s, "%d", tk->wg);
  else
    g_string_append_c(s, '-');
  g_string_append_printf(s, " stage %d", tk->stage);
  if (tk->pin >= 0) g_string_append_printf(s, " pin %d", tk->pin);
  if (tk->prelude > 0) g_string_append_printf(s, " prelude %d", tk->prelude);
  put_role(s, &tk->role);
  put_deps(s, ir, ord, tk);
  g_string_append(s, "  ; ");
  put_prov(s, tk->prov);
  g_string_append_c(s, '\n');
  for (guint i = 0; rfs && i < rfs->len; i++)
    put_rf(s, ir_tensor(ir, g_array_index(rfs, int, i)), base);
  for (guint i = 0; i < tk->ops->len; i++)
    put_op(s, ir, k, (int)i, &g_array_index(tk->ops, IrOp, i));
}

/* "hbm NAME = SYM [+ OFF] RxC stride S" */
static void put_hbm_tensor(GString *s, const IrTensor *x) {
  g_string_append_printf(s, "hbm %s = %s", x->name, x->sym ? x->sym : "?");
  if (x->offset) g_string_append_printf(s, " + %" G_GUINT64_FORMAT, x->offset);
  g_string_append_printf(s, " %dx%d stride %d\n", x->rows, x->cols, x->stride);
}

static int group_cmp(gconstpointer a, gconstpointer b) {
  const IrGroup *x = *(const IrGroup *const *)a, *y = *(const IrGroup *const *)b;
  return strcmp(x->event, y->event);
}

/* The header: plan file, canonical hardware and problem lines, events. */
static void put_header(GString *s, const Ir *ir) {
  g_autofree char *m = sim_machine_canonical(&ir->hw);
  g_autofree char *p = wl_problem_canonical(&ir->prob);
  /* the plan's name escaped (text_escape.h): a line break would end the
   * comment, and what followed would be read as IR */
  g_autofree char *file = text_escape(ir->plan_file ? ir->plan_file : "-");
  g_string_append_printf(s, "; tcc-gen IR of %s\n%s\n%s\nsms_used %d\n\n", file, m, p, ir->sms_used);
  g_autoptr(GString) rec = g_string_new(NULL);
  sched_print(rec, &ir->sched);
  if (rec->len) g_string_append_printf(s, "schedule\n%s\n", rec->str);
  for (guint e = 0; e < ir->events->len; e++)
    g_string_append_printf(s, "event %s\n", (const char *)g_ptr_array_index(ir->events, e));
  /* the families whose dependencies a pass made for a knob, by name (the
   * order the groups were made in is not kept by the text: ir_parse makes
   * them as the tasks name them): "group preload1  ; d1.power.preload_waves:12",
   * "group preload_win any  ; d1.power.preload_window:9" (IrGroup.any_order) */
  g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) fams = g_ptr_array_new();
  for (guint g = 0; g < ir->groups->len; g++) {
    const IrGroup *grp = g_ptr_array_index(ir->groups, g);
    if (g_hash_table_contains(seen, grp->event)) continue;
    g_hash_table_add(seen, grp->event);
    if (grp->prov.knob || grp->any_order) g_ptr_array_add(fams, (gpointer)grp);
  }
  g_ptr_array_sort(fams, group_cmp);
  for (guint i = 0; i < fams->len; i++) {
    const IrGroup *grp = g_ptr_array_index(fams, i);
    g_string_append_printf(s, "group %s%s  ; ", grp->event, grp->any_order ? " any" : "");
    put_prov(s, grp->prov);
    g_string_append_c(s, '\n');
  }
  if (ir->synced) g_string_append(s, "synced\n");
}

char *ir_print(const Ir *ir) {
  GString *s = g_string_new(NULL);
  put_header(s, ir);
  /* RF tensors by owning task, in creation order. */
  guint nt = ir->tasks->len;
  GArray **rfs = g_new0(GArray *, nt + 1);
  for (guint t = 0; t < ir->tensors->len; t++) {
    const IrTensor *x = ir_tensor(ir, (int)t);
    if (x->home != HOME_RF) continue;
    guint k = x->task >= 0 && (guint)x->task < nt ? (guint)x->task : nt;
    if (!rfs[k]) rfs[k] = g_array_new(FALSE, FALSE, sizeof(int));
    int ti = (int)t;
    g_array_append_val(rfs[k], ti);
  }
  /* each task's first op in its WG's sequence (rf_alloc's numbering) */
  int nwg = sim_machine_wgs(&ir->hw);
  int *wg_ops = g_new0(int, nwg + 1);
  /* each group's number within its family */
  g_autofree int *ord = g_new0(int, ir->groups->len + 1);
  g_autoptr(GHashTable) fam = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint g = 0; g < ir->groups->len; g++) {
    const IrGroup *grp = g_ptr_array_index(ir->groups, g);
    int n = GPOINTER_TO_INT(g_hash_table_lookup(fam, grp->event));
    ord[g] = n;
    g_hash_table_insert(fam, grp->event, GINT_TO_POINTER(n + 1));
  }
  for (guint k = 0; k < nt; k++) {
    const IrTask *tk = ir_task_at(ir, (int)k);
    int w = tk->wg >= 0 && tk->wg < nwg ? tk->wg : nwg;
    put_task(s, ir, (int)k, rfs[k], wg_ops[w], ord);
    wg_ops[w] += (int)tk->ops->len;
  }
  g_free(wg_ops);
  if (rfs[nt]) { /* RF tensors without a valid owner: still shown */
    g_string_append(s, "\nno task\n");
    for (guint i = 0; i < rfs[nt]->len; i++)
      put_rf(s, ir_tensor(ir, g_array_index(rfs[nt], int, i)), 0);
  }
  gboolean first = TRUE;
  for (guint t = 0; t < ir->tensors->len; t++) {
    const IrTensor *x = ir_tensor(ir, (int)t);
    if (x->home != HOME_HBM) continue;
    g_string_append(s, first ? "\n" : "");
    first = FALSE;
    put_hbm_tensor(s, x);
  }
  for (guint k = 0; k <= nt; k++)
    if (rfs[k]) g_array_free(rfs[k], TRUE);
  g_free(rfs);
  return g_string_free(s, FALSE);
}
