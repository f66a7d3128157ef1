/* exec.c - functional FP32 semantics of every instruction (docs/machine.md
 * §3).  Compute instructions run at issue (the hazard tracker guarantees their
 * operands are final); transfers copy their data at completion.  Sums run in
 * a fixed order and the build disables FMA contraction, so results are the
 * same bytes on every machine. */
#include <math.h>
#include <string.h>

#include "sim_internal.h"

/* A window of an RF region as a 2-D strided view; a broadcast operand gets a
 * zero step along the broadcast dimension. */
typedef struct View {
  float *p;
  uint8_t *v;
  long rs, cs; /* element steps between rows / columns */
  int rows, cols;
} View;

static const Region *region(const Sim *s, const RfRef *r) {
  return g_ptr_array_index(s->p->regions, r->region);
}

static View view(Sim *s, Wg *w, const RfRef *r) {
  const Geo *g = &s->geo[r->region]; /* not the Region record: one cache miss less */
  long b = (long)g->byte / 4 + (long)r->r0 * g->cols + r->c0;
  View v = {w->rf + b, w->valid + b, g->cols, 1, r->rows, r->cols};
  return v;
}

/* View of `r` stretched to rows x cols (broadcast of 1xC, Rx1 or 1x1). */
static View bview(Sim *s, Wg *w, const RfRef *r, int rows, int cols) {
  View v = view(s, w, r);
  if (v.rows == 1 && rows > 1) v.rs = 0;
  if (v.cols == 1 && cols > 1) v.cs = 0;
  v.rows = rows;
  v.cols = cols;
  return v;
}

#define AT(vw, i, j) ((vw).p[(long)(i) * (vw).rs + (long)(j) * (vw).cs])

gboolean exec_check_read(Sim *s, Wg *w, int pc, const RfRef *r, const char *what) {
  View v = view(s, w, r);
  /* a window as wide as its region is one run of bytes: one search (the
   * row loop below still names the first unwritten element) */
  if (v.rs == v.cols && !memchr(v.v, 0, (size_t)v.rows * (size_t)v.cols)) return TRUE;
  for (int i = 0; i < v.rows; i++) {
    const uint8_t *row = v.v + (long)i * v.rs;
    if (!memchr(row, 0, (size_t)v.cols)) continue;
    for (int j = 0; j < v.cols; j++)
      if (!row[j]) {
        g_autofree char *name = sim_rfref_str(s->p, r);
        sim_fail(s, w->id, pc, "read of never-written RF: %s %s, element [%d][%d]",
                 what, name, i, j);
        return FALSE;
      }
  }
  return TRUE;
}

static void mark(View v) {
  if (v.rs == v.cols) { /* as wide as its region: one run of bytes */
    memset(v.v, 1, (size_t)v.rows * (size_t)v.cols);
    return;
  }
  for (int i = 0; i < v.rows; i++) memset(v.v + (long)i * v.rs, 1, (size_t)v.cols);
}

/* A scratch buffer of at least n floats, kept by the simulator between ops
 * (`k` = 0 or 1: two buffers, for an op that needs both). */
static float *scratch_k(Sim *s, int k, long n) {
  if (n > s->tmp_cap[k]) {
    s->tmp_cap[k] = MAX(n, 2 * s->tmp_cap[k]);
    s->tmp[k] = g_renew(float, s->tmp[k], s->tmp_cap[k]);
  }
  return s->tmp[k];
}
static float *scratch(Sim *s, long n) { return scratch_k(s, 0, n); }

/* The MMA kernel for one row of c: t[j] += a[k] * b[k][j] for k ascending,
 * 32 columns at a time held in registers.  Every t[j] sees one rounded
 * product and one rounded add per k, in k order, whatever the vector width:
 * the AVX-512 and AVX2 clones compute the same bytes as the baseline one
 * (-ffp-contract=off: no fused multiply-add in any of them). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void mma_row(float *restrict t, const float *restrict a, const float *restrict b, long brs,
                    int K, int N) {
  int j0 = 0;
  for (; j0 + 32 <= N; j0 += 32) {
    float acc[32];
    for (int j = 0; j < 32; j++) acc[j] = t[j0 + j];
    for (int k = 0; k < K; k++) {
      const float *restrict bk = b + (long)k * brs + j0;
      float ak = a[k];
      for (int j = 0; j < 32; j++) acc[j] = acc[j] + ak * bk[j];
    }
    for (int j = 0; j < 32; j++) t[j0 + j] = acc[j];
  }
  for (int k = 0; k < K; k++)
    for (int j = j0; j < N; j++) t[j] = t[j] + a[k] * b[(long)k * brs + j];
}

/* mma_row for four rows of c at once (t: rows ts apart, a: rows as apart):
 * each b row is loaded once for the four, and the four rows' sums are
 * independent chains of additions, so they overlap where one row's chain
 * waits on each add.  Every element still adds its products in k order: the
 * same bytes as four calls of mma_row. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void mma_row4(float *restrict t, long ts, const float *restrict a, long as,
                     const float *restrict b, long brs, int K, int N) {
  int j0 = 0;
  for (; j0 + 32 <= N; j0 += 32) {
    float acc[4][32];
    for (int r = 0; r < 4; r++)
      for (int j = 0; j < 32; j++) acc[r][j] = t[r * ts + j0 + j];
    for (int k = 0; k < K; k++) {
      const float *restrict bk = b + (long)k * brs + j0;
      for (int r = 0; r < 4; r++) {
        float ak = a[r * as + k];
        for (int j = 0; j < 32; j++) acc[r][j] = acc[r][j] + ak * bk[j];
      }
    }
    for (int r = 0; r < 4; r++)
      for (int j = 0; j < 32; j++) t[r * ts + j0 + j] = acc[r][j];
  }
  for (int r = 0; r < 4; r++)
    for (int k = 0; k < K; k++)
      for (int j = j0; j < N; j++) t[r * ts + j] = t[r * ts + j] + a[r * as + k] * b[(long)k * brs + j];
}

/* c (+)= a . b  (b transposed with MOD_T); computed into a temporary so that
 * c may alias a or b; k ascending, one rounding per product and per add.
 * MOD_T copies b (N x K) into K x N first and runs the same row kernel: each
 * c[i][j] still adds a[i][k] * b[j][k] for k ascending, the same bits as a
 * dot product per element, at the speed of the vector kernel (attention's
 * q . k^T). */
static gboolean apart(const Sim *s, const RfRef *d, const RfRef *r);

static void mma(Sim *s, Wg *w, const Insn *in) {
  View c = view(s, w, REF(s, in->d)), a = view(s, w, REF(s, in->a)), b = view(s, w, REF(s, in->b));
  int M = c.rows, N = c.cols, K = a.cols;
  /* straight into c when it shares no byte with a or b (the same sums in
   * the same order: only the copies in and out are saved) */
  gboolean direct = apart(s, REF(s, in->d), REF(s, in->a)) && apart(s, REF(s, in->d), REF(s, in->b));
  float *t = direct ? c.p : scratch(s, (long)M * N);
  long ts = direct ? c.rs : N;
  const float *bp = b.p;
  long brs = b.rs;
  if (in->mods & MOD_T) {
    float *bt = scratch_k(s, 1, (long)K * N);
    for (int j = 0; j < N; j++)
      for (int k = 0; k < K; k++) bt[(long)k * N + j] = b.p[(long)j * b.rs + k];
    bp = bt;
    brs = N;
  }
  for (int i = 0; i < M; i++) {
    float *restrict ti = t + (long)i * ts;
    if (in->mods & MOD_Z)
      memset(ti, 0, sizeof(float) * (size_t)N);
    else if (!direct)
      for (int j = 0; j < N; j++) ti[j] = AT(c, i, j);
  }
  int i = 0;
  for (; i + 4 <= M; i += 4) mma_row4(t + (long)i * ts, ts, a.p + (long)i * a.rs, a.rs, bp, brs, K, N);
  for (; i < M; i++) mma_row(t + (long)i * ts, a.p + (long)i * a.rs, bp, brs, K, N);
  if (!direct)
    for (int i = 0; i < M; i++) memcpy(c.p + (long)i * c.rs, t + (long)i * N, sizeof(float) * (size_t)N);
  mark(c);
}

static float bin(Op op, float x, float y) {
  switch (op) {
  case OP_VADD: return x + y;
  case OP_VSUB: return x - y;
  case OP_VMUL: return x * y;
  case OP_VMAX: return x > y || isnan(x) ? x : y;
  case OP_VMIN: return x < y || isnan(x) ? x : y;
  default: return 0.0f;
  }
}

static float un(Op op, float x) {
  switch (op) {
  case OP_SEXP: return (float)exp((double)x);
  case OP_STANH: return (float)tanh((double)x);
  case OP_SRSQRT: return (float)(1.0 / sqrt((double)x));
  case OP_SRECIP: return (float)(1.0 / (double)x);
  default: return x;
  }
}

/* One loop nest per operation (the dispatch stays out of the inner loop);
 * pa/pb/pc step by acs/bcs/ccs: 1, or 0 for a broadcast column. */
#define ROWS(expr)                                                             \
  for (int i = 0; i < R; i++) {                                                \
    float *restrict ti = t + (long)i * ts;                                     \
    const float *pa = a.p + (long)i * a.rs, *pb = b.p + (long)i * b.rs;        \
    const float *pc = c.p + (long)i * c.rs;                                    \
    (void)pa, (void)pb, (void)pc;                                              \
    for (int j = 0; j < C; j++) ti[j] = (expr);                                \
  }
#define A_ pa[j * a.cs]
#define B_ pb[j * b.cs]
#define C_ pc[j * c.cs]

/* Does RF window `r` share no byte with window `d`?  (Bounding byte ranges:
 * conservative, so "no" may only cost a copy.) */
static gboolean apart(const Sim *s, const RfRef *d, const RfRef *r) {
  if (r->region < 0) return TRUE;
  Range x = sim_range(s, d), y = sim_range(s, r);
  return x.hi <= y.lo || y.hi <= x.lo;
}

/* Elementwise ops compute straight into d when it shares no byte with a
 * source, else into a temporary first (d may alias a source, even shifted). */
static void elementwise(Sim *s, Wg *w, const Insn *in) {
  View d = view(s, w, REF(s, in->d));
  int R = d.rows, C = d.cols;
  gboolean direct = apart(s, REF(s, in->d), REF(s, in->a)) && apart(s, REF(s, in->d), REF(s, in->b)) && apart(s, REF(s, in->d), REF(s, in->c));
  float *t = direct ? d.p : scratch(s, (long)R * C), imm = in->imm;
  long ts = direct ? d.rs : C;
  View a = REF(s, in->a)->region >= 0 ? bview(s, w, REF(s, in->a), R, C) : d;
  View b = REF(s, in->b)->region >= 0 ? bview(s, w, REF(s, in->b), R, C) : d;
  View c = REF(s, in->c)->region >= 0 ? bview(s, w, REF(s, in->c), R, C) : d;
  switch (in->op) {
  case OP_VADD: ROWS(A_ + B_); break;
  case OP_VSUB: ROWS(A_ - B_); break;
  case OP_VMUL: ROWS(A_ * B_); break;
  case OP_VMAX: ROWS(bin(OP_VMAX, A_, B_)); break;
  case OP_VMIN: ROWS(bin(OP_VMIN, A_, B_)); break;
  case OP_VFMA: ROWS((A_ * B_) + C_); break; /* a*b rounded, then + c */
  case OP_VMULI: ROWS(A_ * imm); break;
  case OP_VADDI: ROWS(A_ + imm); break;
  case OP_VFILL: ROWS(imm); break;
  case OP_VCOPY: ROWS(A_); break;
  /* SFU: one loop per function (the same expressions as un) */
  case OP_SEXP: ROWS((float)exp((double)A_)); break;
  case OP_STANH: ROWS((float)tanh((double)A_)); break;
  case OP_SRSQRT: ROWS((float)(1.0 / sqrt((double)A_))); break;
  case OP_SRECIP: ROWS((float)(1.0 / (double)A_)); break;
  default: ROWS(un(in->op, A_)); break;
  }
  if (!direct)
    for (int i = 0; i < R; i++) memcpy(d.p + (long)i * d.rs, t + (long)i * C, sizeof(float) * (size_t)C);
  mark(d);
}
#undef ROWS
#undef A_
#undef B_
#undef C_

/* d[i] = sum (left to right) or max of row i of a. */
static void rowwise(Sim *s, Wg *w, const Insn *in) {
  View d = view(s, w, REF(s, in->d)), a = view(s, w, REF(s, in->a));
  float *t = scratch(s, a.rows);
  gboolean sum = in->op == OP_VRSUM;
  for (int i = 0; i < a.rows; i++) {
    float r = AT(a, i, 0);
    if (sum)
      for (int j = 1; j < a.cols; j++) r = r + AT(a, i, j);
    else
      for (int j = 1; j < a.cols; j++) r = bin(OP_VMAX, r, AT(a, i, j));
    t[i] = r;
  }
  for (int i = 0; i < a.rows; i++) AT(d, i, 0) = t[i];
  mark(d);
}

gboolean exec_compute(Sim *s, Wg *w, int pc) {
  const Insn *in = &w->code->insns[pc];
  const RfRef *src[3] = {REF(s, in->a), REF(s, in->b), REF(s, in->c)};
  static const char *const names[3] = {"operand a", "operand b", "operand c"};
  for (int k = 0; k < 3; k++)
    if (src[k]->region >= 0 && !exec_check_read(s, w, pc, src[k], names[k])) return FALSE;
  if (in->op == OP_MMA && !(in->mods & MOD_Z) &&
      !exec_check_read(s, w, pc, REF(s, in->d), "accumulator"))
    return FALSE;
  switch (sim_op_form[in->op]) {
  case F_MMA: mma(s, w, in); break;
  case F_ROW: rowwise(s, w, in); break;
  default: elementwise(s, w, in); break;
  }
  return TRUE;
}

float *exec_gather(Sim *s, Wg *w, const RfRef *r) {
  View v = view(s, w, r);
  float *t = g_new(float, (size_t)v.rows * v.cols);
  for (int i = 0; i < v.rows; i++)
    memcpy(t + (long)i * v.cols, v.p + (long)i * v.rs, sizeof(float) * (size_t)v.cols);
  return t;
}

void exec_scatter(Sim *s, Wg *w, const RfRef *r, const float *data) {
  View v = view(s, w, r);
  for (int i = 0; i < v.rows; i++)
    memcpy(v.p + (long)i * v.rs, data + (long)i * v.cols, sizeof(float) * (size_t)v.cols);
  mark(v);
}

/* Memory side of a transfer as a float pointer (HBM or the SM's SH). */
static float *mem_base(Sim *s, const Wg *w, const Insn *in) {
  if (in->space == MEM_HBM) return s->hbm + in->addr / 4;
  return s->sh[w->sm] + in->addr / 4;
}

/* Copy a completed transfer's data (docs/machine.md §3: at completion). */
void exec_transfer(Sim *s, int wgi, int pc) {
  Wg *w = &s->wg[wgi];
  const Insn *in = &w->code->insns[pc];
  if (in->op == OP_LD) {
    /* straight from memory into each destination window (HBM and SH never
     * overlap an RF): the bytes a copy through a temporary would give */
    const RfRef *d = REF(s, in->d);
    const float *src = mem_base(s, w, in);
    int n = in->mods & MOD_MC ? sim_insn_ntargets(in) : 1;
    for (int k = 0; k < n; k++) {
      RfRef r = *d;
      Wg *tw = w;
      if (in->mods & MOD_MC) r.region = sim_insn_tregion(in, k), tw = &s->wg[in->targets[k]];
      View v = view(s, tw, &r);
      for (int i = 0; i < v.rows; i++)
        memcpy(v.p + (long)i * v.rs, src + (long)i * in->stride, sizeof(float) * (size_t)v.cols);
      mark(v);
    }
    return;
  }
  /* OP_ST */
  g_autofree float *t = exec_gather(s, w, REF(s, in->a));
  if (in->space == MEM_RF) {
    const Region *g = region(s, REF(s, in->dst));
    exec_scatter(s, &s->wg[g->wg], REF(s, in->dst), t);
    return;
  }
  float *dst = mem_base(s, w, in);
  for (int i = 0; i < REF(s, in->a)->rows; i++)
    memcpy(dst + (long)i * in->stride, t + (long)i * REF(s, in->a)->cols, sizeof(float) * (size_t)REF(s, in->a)->cols);
}
