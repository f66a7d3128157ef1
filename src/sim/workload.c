/* workload.c - the two problems (P1 prefill, D1 decode): parameters, the
 * frozen ABI memory map, deterministic data, the double-precision reference
 * and the check of a program's outputs.  docs/workloads.md is the prose
 * version; a change to the ABI, the PRNG or the math is a new spec version. */
#include "workload.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

G_DEFINE_QUARK(tcc-workload-error-quark, wl_error)

/* ---------------------------------------------------------------- problems */

#define HEAD_DIM WL_HEAD_DIM
#define ABI_ALIGN 4096u

enum { FOR_D1 = 1, FOR_P1 = 2 };

typedef struct {
  const char *key;
  size_t offset; /* of the int field in Problem */
  int lo, hi;
  gboolean mult32;
  int applies; /* FOR_D1 | FOR_P1 */
  int def_d1, def_p1;
} ProbParam;

/* ORDER-MATTERS: the canonical `.problem` line lists the keys that apply to
 * the problem in this order. */
static const ProbParam wl_params[] = {
    {"d_model", offsetof(Problem, d_model), 32, 1024, TRUE, FOR_D1 | FOR_P1, 128, 256},
    {"heads", offsetof(Problem, heads), 1, 32, FALSE, FOR_D1 | FOR_P1, 4, 8},
    {"d_ff", offsetof(Problem, d_ff), 32, 4096, TRUE, FOR_D1 | FOR_P1, 512, 1024},
    {"layers", offsetof(Problem, layers), 1, 8, FALSE, FOR_D1 | FOR_P1, 2, 2},
    {"history", offsetof(Problem, history), 0, 1024, TRUE, FOR_D1, 128, 0},
    {"steps", offsetof(Problem, steps), 1, 64, FALSE, FOR_D1, 8, 0},
    {"seqs", offsetof(Problem, seqs), 1, 8, FALSE, FOR_P1, 0, 2},
    {"rows", offsetof(Problem, rows), 32, 1024, TRUE, FOR_P1, 0, 256},
};

/* The int field of p described by a parameter. */
static int *pfield(Problem *p, const ProbParam *q) {
  return (int *)((char *)p + q->offset);
}

/* Read-only twin of pfield. */
static int pget(const Problem *p, const ProbParam *q) {
  return *(const int *)((const char *)p + q->offset);
}

/* The `applies` bit of a problem kind. */
static int kind_mask(ProblemKind kind) { return kind == PROB_D1 ? FOR_D1 : FOR_P1; }

/* Range and multiple-of-32 check of one value; the messages are part of the
 * user interface (tests pin them). */
static gboolean check_value(const ProbParam *q, long v, GError **err) {
  if (v < q->lo || v > q->hi) {
    g_set_error(err, WL_ERROR, 1, "%s=%ld out of range %d..%d", q->key, v, q->lo,
                q->hi);
    return FALSE;
  }
  if (q->mult32 && v % 32 != 0) {
    g_set_error(err, WL_ERROR, 1, "%s=%ld must be a multiple of 32", q->key, v);
    return FALSE;
  }
  return TRUE;
}

/* The brief's default problem of a kind; keys that do not apply are 0. */
void wl_problem_default(Problem *p, ProblemKind kind) {
  memset(p, 0, sizeof *p);
  p->kind = kind;
  for (size_t i = 0; i < G_N_ELEMENTS(wl_params); i++)
    *pfield(p, &wl_params[i]) =
        kind == PROB_D1 ? wl_params[i].def_d1 : wl_params[i].def_p1;
}

/* Set one `.problem` key; rejects unknown keys, keys of the other problem and
 * values out of range.  Cross-key rules (head_dim) are in validate. */
gboolean wl_problem_set(Problem *p, const char *key, long value, GError **err) {
  for (size_t i = 0; i < G_N_ELEMENTS(wl_params); i++) {
    const ProbParam *q = &wl_params[i];
    if (g_strcmp0(q->key, key) != 0) continue;
    if (!(q->applies & kind_mask(p->kind))) {
      g_set_error(err, WL_ERROR, 2, "'%s' does not apply to %s", key,
                  wl_problem_name(p->kind));
      return FALSE;
    }
    if (!check_value(q, value, err)) return FALSE;
    *pfield(p, q) = (int)value;
    return TRUE;
  }
  g_set_error(err, WL_ERROR, 2, "unknown problem parameter '%s'", key);
  return FALSE;
}

/* Whole-problem check: every applicable key in range, unused keys 0, and
 * d_model = 32 * heads (head_dim is fixed at 32). */
gboolean wl_problem_validate(const Problem *p, GError **err) {
  if (p->kind != PROB_D1 && p->kind != PROB_P1) {
    g_set_error(err, WL_ERROR, 1, "unknown problem kind %d", (int)p->kind);
    return FALSE;
  }
  for (size_t i = 0; i < G_N_ELEMENTS(wl_params); i++) {
    const ProbParam *q = &wl_params[i];
    int v = pget(p, q);
    if (q->applies & kind_mask(p->kind)) {
      if (!check_value(q, v, err)) return FALSE;
    } else if (v != 0) {
      g_set_error(err, WL_ERROR, 2, "'%s' does not apply to %s", q->key,
                  wl_problem_name(p->kind));
      return FALSE;
    }
  }
  if (p->d_model != HEAD_DIM * p->heads) {
    g_set_error(err, WL_ERROR, 1,
                "d_model=%d with heads=%d: head_dim must be 32 (d_model = 32*heads)",
                p->d_model, p->heads);
    return FALSE;
  }
  return TRUE;
}

/* The name used in `.problem` lines and reports. */
const char *wl_problem_name(ProblemKind kind) { return kind == PROB_D1 ? "d1" : "p1"; }

double wl_score(int64_t p1_cycles, int64_t d1_cycles) {
  return 1000.0 * sqrt(WL_SCORE_P1_REF * WL_SCORE_D1_REF / ((double)p1_cycles * (double)d1_cycles));
}

/* `.problem d1 d_model=128 ...`: every applicable key, table order. */
char *wl_problem_canonical(const Problem *p) {
  GString *s = g_string_new(".problem ");
  g_string_append(s, wl_problem_name(p->kind));
  for (size_t i = 0; i < G_N_ELEMENTS(wl_params); i++)
    if (wl_params[i].applies & kind_mask(p->kind))
      g_string_append_printf(s, " %s=%d", wl_params[i].key, pget(p, &wl_params[i]));
  return g_string_free(s, FALSE);
}

/* --------------------------------------------------------------------- ABI */

/* Append a symbol at the next 4096-aligned address after the previous one. */
static void abi_add(GArray *a, uint64_t *next, const char *name, AbiKind kind,
                    int rows, int cols) {
  AbiSym s;
  memset(&s, 0, sizeof s);
  g_strlcpy(s.name, name, sizeof s.name);
  s.kind = kind;
  s.addr = *next;
  s.rows = rows;
  s.cols = cols;
  s.bytes = (uint64_t)rows * (uint64_t)cols * 4u;
  *next = (s.addr + s.bytes + ABI_ALIGN - 1) / ABI_ALIGN * ABI_ALIGN;
  g_array_append_val(a, s);
}

/* Append a per-layer symbol "NAME.lL". */
static void abi_add_l(GArray *a, uint64_t *next, const char *name, int layer,
                      AbiKind kind, int rows, int cols) {
  char buf[32];
  snprintf(buf, sizeof buf, "%s.l%d", name, layer);
  abi_add(a, next, buf, kind, rows, cols);
}

uint64_t wl_scratch_bytes(const Problem *p) {
  uint64_t need = 0;
  if (p->kind == PROB_P1)
    need = 4u * (uint64_t)p->seqs * (uint64_t)p->rows * (8u * (uint64_t)p->d_model + (uint64_t)p->d_ff);
  need = (need + ABI_ALIGN - 1) / ABI_ALIGN * ABI_ALIGN;
  return MAX(need, (uint64_t)WL_SCRATCH_BYTES);
}

/* The frozen memory map (docs/workloads.md, "ABI"): x_in, the weights layer
 * by layer, the caches / K,V outputs layer by layer, out, scratch.  The
 * problem must be valid. */
void wl_abi_build(const Problem *p, Abi *abi) {
  GArray *a = g_array_new(FALSE, TRUE, sizeof(AbiSym));
  uint64_t next = 0;
  int d = p->d_model, f = p->d_ff;
  int nrows = p->kind == PROB_D1 ? p->steps : p->seqs * p->rows;
  abi_add(a, &next, "x_in", ABI_INPUT, nrows, d);
  for (int l = 0; l < p->layers; l++) {
    abi_add_l(a, &next, "ln1_g", l, ABI_WEIGHT, 1, d);
    abi_add_l(a, &next, "ln1_b", l, ABI_WEIGHT, 1, d);
    abi_add_l(a, &next, "wqkv", l, ABI_WEIGHT, d, 3 * d);
    abi_add_l(a, &next, "bqkv", l, ABI_WEIGHT, 1, 3 * d);
    abi_add_l(a, &next, "wo", l, ABI_WEIGHT, d, d);
    abi_add_l(a, &next, "bo", l, ABI_WEIGHT, 1, d);
    abi_add_l(a, &next, "ln2_g", l, ABI_WEIGHT, 1, d);
    abi_add_l(a, &next, "ln2_b", l, ABI_WEIGHT, 1, d);
    abi_add_l(a, &next, "w1", l, ABI_WEIGHT, d, f);
    abi_add_l(a, &next, "b1", l, ABI_WEIGHT, 1, f);
    abi_add_l(a, &next, "w2", l, ABI_WEIGHT, f, d);
    abi_add_l(a, &next, "b2", l, ABI_WEIGHT, 1, d);
  }
  for (int l = 0; l < p->layers; l++) {
    if (p->kind == PROB_D1) {
      int r = p->heads * (p->history + p->steps);
      abi_add_l(a, &next, "k_cache", l, ABI_CACHE, r, HEAD_DIM);
      abi_add_l(a, &next, "v_cache", l, ABI_CACHE, r, HEAD_DIM);
    } else {
      int r = p->seqs * p->heads * p->rows;
      abi_add_l(a, &next, "k_out", l, ABI_OUTPUT, r, HEAD_DIM);
      abi_add_l(a, &next, "v_out", l, ABI_OUTPUT, r, HEAD_DIM);
    }
  }
  abi_add(a, &next, "out", ABI_OUTPUT, nrows, d);
  abi_add(a, &next, "scratch", ABI_SCRATCH, 1, (int)(wl_scratch_bytes(p) / 4u));
  abi->n = (int)a->len;
  abi->hbm_bytes = next;
  abi->syms = (AbiSym *)g_array_free(a, FALSE);
}

/* Free a map built by wl_abi_build; leaves it empty. */
void wl_abi_clear(Abi *abi) {
  g_free(abi->syms);
  memset(abi, 0, sizeof *abi);
}

/* The symbol called `name`, or NULL.  Linear: tables have at most ~110
 * entries (8 layers). */
const AbiSym *wl_abi_lookup(const Abi *abi, const char *name) {
  for (int i = 0; i < abi->n; i++)
    if (strcmp(abi->syms[i].name, name) == 0) return &abi->syms[i];
  return NULL;
}

/* Index of a symbol in the table (its PRNG stream), or -1. */
static int abi_index(const Abi *abi, const char *name) {
  const AbiSym *s = wl_abi_lookup(abi, name);
  return s ? (int)(s - abi->syms) : -1;
}


/* -------------------------------------------------------------------- data */

#define WL_SYM_MUL 0xD1B54A32D192ED03ull

uint64_t wl_mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Stream key of ABI symbol `sym` (its index in the table) for a seed. */
static uint64_t sym_key(uint64_t seed, int sym) {
  return wl_mix64(seed * WL_GOLDEN + (uint64_t)(sym + 1) * WL_SYM_MUL);
}

/* Element e of a stream: uniform on [-1, 1) in steps of 2^-23, so exact in
 * FP32.  It is the (e+1)-th output of SplitMix64 started at the key. */
static double unif(uint64_t key, uint64_t e) {
  uint64_t u = wl_mix64(key + (e + 1) * WL_GOLDEN);
  return (double)(u >> 40) * 0x1p-23 - 1.0;
}

/* How a symbol's values are scaled from U, decided by its name. */
typedef enum { SC_UNIT, SC_MATRIX, SC_GAIN, SC_BIAS } Scale;

/* The scale rule of a symbol (docs/workloads.md section 4). */
static Scale sym_scale(const AbiSym *s) {
  const char *n = s->name;
  if (g_str_has_prefix(n, "ln1_g") || g_str_has_prefix(n, "ln2_g")) return SC_GAIN;
  if (g_str_has_prefix(n, "ln1_b") || g_str_has_prefix(n, "ln2_b") || n[0] == 'b')
    return SC_BIAS;
  if (n[0] == 'w') return SC_MATRIX;
  return SC_UNIT; /* x_in, history K/V */
}

/* Rows [r0, r1) of symbol `sym` for a seed, as the floats stored in HBM:
 * each value is computed in double and rounded to float once. */
static void gen_rows(const Abi *abi, int sym, uint64_t seed, int r0, int r1,
                     float *dst) {
  const AbiSym *s = &abi->syms[sym];
  uint64_t key = sym_key(seed, sym);
  Scale sc = sym_scale(s);
  double sqrt_fan_in = sqrt((double)s->rows);
  for (int r = r0; r < r1; r++)
    for (int c = 0; c < s->cols; c++) {
      uint64_t e = (uint64_t)r * (uint64_t)s->cols + (uint64_t)c;
      double u = unif(key, e), v;
      switch (sc) {
      case SC_MATRIX: v = u / sqrt_fan_in; break;
      case SC_GAIN: v = 1.0 + 0.1 * u; break;
      case SC_BIAS: v = 0.1 * u; break;
      default: v = u; break;
      }
      *dst++ = (float)v;
    }
}

/* Mark n floats as not yet written. */
static void fill_nan(float *dst, size_t n) {
  for (size_t i = 0; i < n; i++) dst[i] = NAN;
}

/* Data of a seed: weights, history K/V and P1's inputs; NaN where the program
 * (outputs, new D1 cache rows) or the host (D1 inputs) has yet to write;
 * zero in scratch and in the alignment gaps between symbols. */
void wl_init_hbm(const Problem *p, const Abi *abi, uint64_t seed, float *hbm) {
  memset(hbm, 0, abi->hbm_bytes);
  for (int i = 0; i < abi->n; i++) {
    const AbiSym *s = &abi->syms[i];
    float *dst = hbm + s->addr / 4;
    switch (s->kind) {
    case ABI_INPUT:
      if (p->kind == PROB_P1) gen_rows(abi, i, seed, 0, s->rows, dst);
      else fill_nan(dst, s->bytes / 4);
      break;
    case ABI_WEIGHT: gen_rows(abi, i, seed, 0, s->rows, dst); break;
    case ABI_CACHE: {
      int span = p->history + p->steps;
      for (int h = 0; h < p->heads; h++) {
        gen_rows(abi, i, seed, h * span, h * span + p->history,
                 dst + (size_t)h * span * HEAD_DIM);
        fill_nan(dst + ((size_t)h * span + p->history) * HEAD_DIM,
                 (size_t)p->steps * HEAD_DIM);
      }
      break;
    }
    case ABI_OUTPUT: fill_nan(dst, s->bytes / 4); break;
    case ABI_SCRATCH: break;
    }
  }
}

/* The host's release of D1 input row `step` (docs/machine.md section 3).  A
 * step outside 0..rows-1 of x_in is ignored. */
void wl_release_input(const Problem *p, const Abi *abi, uint64_t seed, int step,
                      float *hbm) {
  (void)p;
  int i = abi_index(abi, "x_in");
  const AbiSym *s = &abi->syms[i];
  if (step < 0 || step >= s->rows) return;
  gen_rows(abi, i, seed, step, step + 1, hbm + s->addr / 4 + (size_t)step * s->cols);
}

/* --------------------------------------------------------------- reference */

/* The reference works in double on the float values stored in HBM.  Every
 * sum has a fixed order (docs/workloads.md, "Reference"), so it is
 * deterministic; speed comes from the loop structure, never from
 * reassociating a sum. */

enum { W_LN1G, W_LN1B, W_QKV, W_BQKV, W_O, W_BO, W_LN2G, W_LN2B, W_1, W_B1, W_2,
       W_B2, W_COUNT };
/* ORDER-MATTERS: same order as the enum above and as the ABI's per-layer
 * symbols. */
static const char *const wl_wnames[W_COUNT] = {
    "ln1_g", "ln1_b", "wqkv", "bqkv", "wo", "bo",
    "ln2_g", "ln2_b", "w1",   "b1",   "w2", "b2"};

typedef struct {
  double *w[W_COUNT]; /* matrices packed by pack_panels, vectors plain */
} RefLayer;

/* Float data of a whole symbol, as stored in HBM (caller frees). */
static float *gen_sym(const Abi *abi, int sym, uint64_t seed) {
  const AbiSym *s = &abi->syms[sym];
  float *f = g_new(float, (size_t)s->rows * s->cols);
  gen_rows(abi, sym, seed, 0, s->rows, f);
  return f;
}

/* A k x n matrix (n a multiple of 8) repacked as n/8 panels of k x 8: panel
 * j holds columns 8j..8j+7, row after row, so the GEMM reads it contiguously. */
static double *pack_panels(const float *b, int k, int n) {
  double *p = g_new(double, (size_t)k * n);
  for (int j0 = 0; j0 < n; j0 += 8)
    for (int kk = 0; kk < k; kk++)
      for (int c = 0; c < 8; c++)
        p[(size_t)j0 * k + (size_t)kk * 8 + c] = b[(size_t)kk * n + j0 + c];
  return p;
}

/* Load and convert the weights of layer l. */
static void ref_layer_load(const Abi *abi, uint64_t seed, int l, RefLayer *L) {
  for (int w = 0; w < W_COUNT; w++) {
    char name[32];
    snprintf(name, sizeof name, "%s.l%d", wl_wnames[w], l);
    int i = abi_index(abi, name);
    const AbiSym *s = &abi->syms[i];
    float *f = gen_sym(abi, i, seed);
    size_t n = (size_t)s->rows * s->cols;
    if (s->rows > 1) {
      L->w[w] = pack_panels(f, s->rows, s->cols);
    } else {
      L->w[w] = g_new(double, n);
      for (size_t e = 0; e < n; e++) L->w[w][e] = f[e];
    }
    g_free(f);
  }
}

/* Free what ref_layer_load allocated. */
static void ref_layer_free(RefLayer *L) {
  for (int w = 0; w < W_COUNT; w++) g_free(L->w[w]);
}

/* GEMM kernels.  C[m x n] = A[m x k] . B[k x n] + bias, A with row stride
 * lda, C with row stride ldc, B packed by pack_panels from a kb x n matrix
 * (kb >= k: only its first k rows are used); bias may be NULL (no add).  Every element sums its k products in ascending k starting
 * from 0.0 (one IEEE multiply, one IEEE add per step, never fused), then
 * adds its bias; the variants below differ only in how many elements they
 * carry at once, so they give bit-identical results.  Rows go in blocks of
 * 4; a short last block repeats its last real row and stores the real ones. */

/* Store a block of mr rows of sums plus bias. */
static inline void gemm_store(const double (*acc)[8], int mr, const double *bias,
                              double *C, int ldc) {
  for (int r = 0; r < mr; r++)
    for (int c = 0; c < 8; c++)
      C[(size_t)r * ldc + c] = bias ? acc[r][c] + bias[c] : acc[r][c];
}

/* The rows of block i0 (the last real row repeated past m). */
static inline void gemm_rows(const double *A, int m, int lda, int i0, const double *a[4]) {
  for (int r = 0; r < 4; r++)
    a[r] = A + (size_t)(i0 + r < m ? i0 + r : m - 1) * lda;
}

#if defined(__GNUC__)
typedef double wl_v2d __attribute__((vector_size(16)));

/* Portable vector kernel (SSE2 / NEON): 4 rows x 4 columns per pass, the
 * 8-wide panel in two halves, sums in named variables so they stay in
 * registers. */
static void gemm_v2(const double *A, int lda, int m, int k, const double *Bp,
                    int kb, const double *bias, int n, double *C, int ldc) {
  for (int i0 = 0; i0 < m; i0 += 4) {
    const double *a[4];
    gemm_rows(A, m, lda, i0, a);
    for (int j0 = 0; j0 < n; j0 += 8) {
      double acc[4][8];
      for (int half = 0; half < 8; half += 4) {
        const double *b = Bp + (size_t)j0 * kb + half;
        wl_v2d c00 = {0, 0}, c01 = {0, 0}, c10 = {0, 0}, c11 = {0, 0};
        wl_v2d c20 = {0, 0}, c21 = {0, 0}, c30 = {0, 0}, c31 = {0, 0};
        for (int kk = 0; kk < k; kk++, b += 8) {
          wl_v2d b0, b1, x;
          memcpy(&b0, b, sizeof b0);
          memcpy(&b1, b + 2, sizeof b1);
          x = (wl_v2d){a[0][kk], a[0][kk]}; c00 += x * b0; c01 += x * b1;
          x = (wl_v2d){a[1][kk], a[1][kk]}; c10 += x * b0; c11 += x * b1;
          x = (wl_v2d){a[2][kk], a[2][kk]}; c20 += x * b0; c21 += x * b1;
          x = (wl_v2d){a[3][kk], a[3][kk]}; c30 += x * b0; c31 += x * b1;
        }
        memcpy(&acc[0][half], &c00, 16); memcpy(&acc[0][half + 2], &c01, 16);
        memcpy(&acc[1][half], &c10, 16); memcpy(&acc[1][half + 2], &c11, 16);
        memcpy(&acc[2][half], &c20, 16); memcpy(&acc[2][half + 2], &c21, 16);
        memcpy(&acc[3][half], &c30, 16); memcpy(&acc[3][half + 2], &c31, 16);
      }
      gemm_store((const double(*)[8])acc, m - i0 < 4 ? m - i0 : 4,
                 bias ? bias + j0 : NULL, C + (size_t)i0 * ldc + j0, ldc);
    }
  }
}
#define GEMM_PORTABLE gemm_v2
#else
/* Plain C kernel for compilers without vector extensions. */
static void gemm_c(const double *A, int lda, int m, int k, const double *Bp,
                   int kb, const double *bias, int n, double *C, int ldc) {
  for (int i0 = 0; i0 < m; i0 += 4) {
    const double *a[4];
    gemm_rows(A, m, lda, i0, a);
    for (int j0 = 0; j0 < n; j0 += 8) {
      const double *b = Bp + (size_t)j0 * kb;
      double acc[4][8] = {{0}};
      for (int kk = 0; kk < k; kk++, b += 8)
        for (int r = 0; r < 4; r++)
          for (int c = 0; c < 8; c++) acc[r][c] += a[r][kk] * b[c];
      gemm_store((const double(*)[8])acc, m - i0 < 4 ? m - i0 : 4,
                 bias ? bias + j0 : NULL, C + (size_t)i0 * ldc + j0, ldc);
    }
  }
}
#define GEMM_PORTABLE gemm_c
#endif

#if defined(__GNUC__) && defined(__x86_64__) && !defined(WL_NO_AVX2)
#define WL_HAVE_AVX2 1
typedef double wl_v4d __attribute__((vector_size(32)));

/* AVX2 kernel (chosen at run time): 4 rows x 8 columns, 8 ymm sums.  AVX2
 * only: FMA is not enabled, so the arithmetic is that of gemm_v2. */
__attribute__((target("avx2"))) static void
gemm_avx2(const double *A, int lda, int m, int k, const double *Bp, int kb,
          const double *bias, int n, double *C, int ldc) {
  for (int i0 = 0; i0 < m; i0 += 4) {
    const double *a[4];
    gemm_rows(A, m, lda, i0, a);
    for (int j0 = 0; j0 < n; j0 += 8) {
      const double *b = Bp + (size_t)j0 * kb;
      wl_v4d c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0};
      wl_v4d c20 = {0}, c21 = {0}, c30 = {0}, c31 = {0};
      for (int kk = 0; kk < k; kk++, b += 8) {
        wl_v4d b0, b1, x;
        memcpy(&b0, b, sizeof b0);
        memcpy(&b1, b + 4, sizeof b1);
        x = (wl_v4d){a[0][kk], a[0][kk], a[0][kk], a[0][kk]}; c00 += x * b0; c01 += x * b1;
        x = (wl_v4d){a[1][kk], a[1][kk], a[1][kk], a[1][kk]}; c10 += x * b0; c11 += x * b1;
        x = (wl_v4d){a[2][kk], a[2][kk], a[2][kk], a[2][kk]}; c20 += x * b0; c21 += x * b1;
        x = (wl_v4d){a[3][kk], a[3][kk], a[3][kk], a[3][kk]}; c30 += x * b0; c31 += x * b1;
      }
      double acc[4][8];
      memcpy(&acc[0][0], &c00, 32); memcpy(&acc[0][4], &c01, 32);
      memcpy(&acc[1][0], &c10, 32); memcpy(&acc[1][4], &c11, 32);
      memcpy(&acc[2][0], &c20, 32); memcpy(&acc[2][4], &c21, 32);
      memcpy(&acc[3][0], &c30, 32); memcpy(&acc[3][4], &c31, 32);
      gemm_store((const double(*)[8])acc, m - i0 < 4 ? m - i0 : 4,
                 bias ? bias + j0 : NULL, C + (size_t)i0 * ldc + j0, ldc);
    }
  }
  /* GCC omits this here; without it the SSE code of libm that follows
   * (exp, tanh) runs with dirty upper halves, several times slower. */
  __builtin_ia32_vzeroupper();
}
#endif

#ifdef WL_HAVE_AVX2
typedef double wl_v8d __attribute__((vector_size(64)));

/* AVX-512 kernel (chosen at run time): 8 rows x 8 columns, one zmm sum per
 * row, the rows of a short last block repeated as in gemm_rows.  No FMA
 * (-ffp-contract=off), so the arithmetic is that of the others. */
__attribute__((target("avx512f"))) static void
gemm_avx512(const double *A, int lda, int m, int k, const double *Bp, int kb,
            const double *bias, int n, double *C, int ldc) {
  for (int i0 = 0; i0 < m; i0 += 8) {
    const double *a[8];
    for (int r = 0; r < 8; r++) a[r] = A + (size_t)(i0 + r < m ? i0 + r : m - 1) * lda;
    for (int j0 = 0; j0 < n; j0 += 8) {
      const double *b = Bp + (size_t)j0 * kb;
      wl_v8d c0 = {0}, c1 = {0}, c2 = {0}, c3 = {0}, c4 = {0}, c5 = {0}, c6 = {0}, c7 = {0};
      for (int kk = 0; kk < k; kk++, b += 8) {
        wl_v8d b0;
        memcpy(&b0, b, sizeof b0);
        c0 += a[0][kk] * b0;
        c1 += a[1][kk] * b0;
        c2 += a[2][kk] * b0;
        c3 += a[3][kk] * b0;
        c4 += a[4][kk] * b0;
        c5 += a[5][kk] * b0;
        c6 += a[6][kk] * b0;
        c7 += a[7][kk] * b0;
      }
      double acc[8][8];
      memcpy(acc[0], &c0, 64); memcpy(acc[1], &c1, 64);
      memcpy(acc[2], &c2, 64); memcpy(acc[3], &c3, 64);
      memcpy(acc[4], &c4, 64); memcpy(acc[5], &c5, 64);
      memcpy(acc[6], &c6, 64); memcpy(acc[7], &c7, 64);
      gemm_store((const double(*)[8])acc, m - i0 < 8 ? m - i0 : 8,
                 bias ? bias + j0 : NULL, C + (size_t)i0 * ldc + j0, ldc);
    }
  }
  __builtin_ia32_vzeroupper(); /* as in gemm_avx2 */
}
#endif

/* The GEMM of the reference: the fastest kernel this CPU runs. */
static void ref_gemm(const double *A, int lda, int m, int k, const double *Bp,
                     int kb, const double *bias, int n, double *C, int ldc) {
#ifdef WL_HAVE_AVX2
  if (__builtin_cpu_supports("avx512f")) {
    gemm_avx512(A, lda, m, k, Bp, kb, bias, n, C, ldc);
    return;
  }
  if (__builtin_cpu_supports("avx2")) {
    gemm_avx2(A, lda, m, k, Bp, kb, bias, n, C, ldc);
    return;
  }
#endif
  GEMM_PORTABLE(A, lda, m, k, Bp, kb, bias, n, C, ldc);
}

/* y = (x - mean) / sqrt(var + eps) * g + b per row of x[n x d]; mean and the
 * biased variance sum in ascending column order.  eps is WL_LN_EPS except in
 * a deviating model (wl_write_deviant). */
static void ref_layernorm(const double *x, int n, int d, const double *g,
                          const double *b, double eps, double *y) {
  for (int i = 0; i < n; i++) {
    const double *xr = x + (size_t)i * d;
    double *yr = y + (size_t)i * d, sum = 0.0, sq = 0.0;
    for (int c = 0; c < d; c++) sum += xr[c];
    double mean = sum / d;
    for (int c = 0; c < d; c++) sq += (xr[c] - mean) * (xr[c] - mean);
    double den = sqrt(sq / d + eps);
    for (int c = 0; c < d; c++) yr[c] = (xr[c] - mean) / den * g[c] + b[c];
  }
}

/* GELU, tanh form, in place.  tanh(y) is evaluated as 1 - 2/(exp(2y) + 1)
 * (within ~1e-16 of tanh, and three times faster than libm's tanh).  With
 * `erf_form` (a deviating model only) the exact form 0.5 z (1 + erf(z/sqrt 2)). */
static void ref_gelu(double *z, size_t n, gboolean erf_form) {
  if (erf_form) {
    for (size_t i = 0; i < n; i++) z[i] = 0.5 * z[i] * (1.0 + erf(z[i] / sqrt(2.0)));
    return;
  }
  const double k = sqrt(2.0 / G_PI);
  for (size_t i = 0; i < n; i++) {
    double y = k * (z[i] + 0.044715 * z[i] * z[i] * z[i]);
    z[i] = 0.5 * z[i] * (1.0 + (1.0 - 2.0 / (exp(2.0 * y) + 1.0)));
  }
}

/* Causal attention of n new rows over `hist` earlier positions.  K/V live in
 * kb/vb as [head][pos][32] with `hs` positions per head; the new rows' k, v
 * (from qkv[n x 3d]) are stored at positions hist..hist+n-1 first.  Row i
 * sees positions 0..hist+i.  Score = (sum over c ascending of q*k) * 1/sqrt(32);
 * softmax with the max subtracted, its sum in ascending position; the output
 * sums exp-weighted V rows in ascending position, then divides by the sum.
 * Both products run on the GEMM kernels, 4 rows at a time, over the
 * positions the block needs (a row's positions past its own get weight 0,
 * which leaves its sums unchanged).
 * A deviating model (wl_write_deviant) may scale by 1/sqrt(33) instead, or
 * shift the mask by `ahead` = +1 (row i also sees hist+i+1, when it exists)
 * or -1 (row i sees 0..hist+i-1; a row that sees nothing outputs 0). */
static void ref_attend(const double *qkv, int n, int d, int heads, int hist,
                       double *kb, double *vb, int hs, WlDeviation dev, double *ao) {
  int np = hist + n, npad = (np + 7) / 8 * 8;
  int ahead = dev == WL_DEV_MASK_NEXT ? 1 : dev == WL_DEV_MASK_SELF ? -1 : 0;
  double scale = 1.0 / sqrt((double)(dev == WL_DEV_SCALE_33 ? HEAD_DIM + 1 : HEAD_DIM));
  double *kt = g_new(double, (size_t)HEAD_DIM * npad);
  double *vp = g_new(double, (size_t)HEAD_DIM * npad);
  double *S = g_new(double, (size_t)4 * npad), O[4 * HEAD_DIM], sum[4];
  for (int h = 0; h < heads; h++) {
    double *K = kb + (size_t)h * hs * HEAD_DIM, *V = vb + (size_t)h * hs * HEAD_DIM;
    for (int i = 0; i < n; i++)
      for (int c = 0; c < HEAD_DIM; c++) {
        const double *row = qkv + (size_t)i * 3 * d + h * HEAD_DIM + c;
        K[(size_t)(hist + i) * HEAD_DIM + c] = row[d];
        V[(size_t)(hist + i) * HEAD_DIM + c] = row[2 * d];
      }
    /* K^T (32 x npad) and V (npad x 32) in GEMM panels, zero past np. */
    for (int j0 = 0; j0 < npad; j0 += 8)
      for (int c = 0; c < HEAD_DIM; c++)
        for (int jj = 0; jj < 8; jj++)
          kt[(size_t)j0 * HEAD_DIM + c * 8 + jj] =
              j0 + jj < np ? K[(size_t)(j0 + jj) * HEAD_DIM + c] : 0.0;
    for (int j0 = 0; j0 < HEAD_DIM; j0 += 8)
      for (int pos = 0; pos < npad; pos++)
        for (int jj = 0; jj < 8; jj++)
          vp[(size_t)j0 * npad + pos * 8 + jj] =
              pos < np ? V[(size_t)pos * HEAD_DIM + j0 + jj] : 0.0;
    for (int i0 = 0; i0 < n; i0 += 4) {
      int mr = n - i0 < 4 ? n - i0 : 4, lim = MIN(hist + i0 + mr + MAX(ahead, 0), np);
      ref_gemm(qkv + (size_t)i0 * 3 * d + h * HEAD_DIM, 3 * d, mr, HEAD_DIM, kt,
               HEAD_DIM, NULL, (lim + 7) / 8 * 8, S, npad);
      for (int r = 0; r < mr; r++) {
        double *sr = S + (size_t)r * npad, m = -INFINITY;
        int len = MIN(hist + i0 + r + 1 + ahead, np);
        sum[r] = 0.0;
        for (int pos = 0; pos < len; pos++) {
          sr[pos] *= scale;
          if (sr[pos] > m) m = sr[pos];
        }
        for (int pos = 0; pos < len; pos++) {
          sr[pos] = exp(sr[pos] - m);
          sum[r] += sr[pos];
        }
        for (int pos = len; pos < lim; pos++) sr[pos] = 0.0;
      }
      ref_gemm(S, npad, mr, lim, vp, npad, NULL, HEAD_DIM, O, HEAD_DIM);
      for (int r = 0; r < mr; r++)
        for (int c = 0; c < HEAD_DIM; c++)
          ao[(size_t)(i0 + r) * d + h * HEAD_DIM + c] =
              sum[r] > 0.0 ? O[r * HEAD_DIM + c] / sum[r] : 0.0;
    }
  }
  g_free(kt);
  g_free(vp);
  g_free(S);
}

/* x[n x d] += a[n x d], elementwise. */
static void ref_add(double *x, const double *a, size_t n) {
  for (size_t i = 0; i < n; i++) x[i] += a[i];
}

/* Work space of one sequence's blocks, allocated once per thread. */
typedef struct {
  double *h, *o, *qkv, *t;
} RefWork;

/* One pre-LN block on x[n x d] in place (see ref_attend for kb/vb/hs/hist);
 * dev is WL_DEV_NONE but in a deviating model (wl_write_deviant). */
static void ref_block(const Problem *p, const RefLayer *L, double *x, int n, int hist,
                      double *kb, double *vb, int hs, WlDeviation dev, const RefWork *w) {
  int d = p->d_model, f = p->d_ff;
  size_t nd = (size_t)n * d;
  double *h = w->h, *o = w->o, *qkv = w->qkv, *t = w->t;
  double eps = dev == WL_DEV_LN_EPS_1E6 ? 1e-6 : dev == WL_DEV_LN_EPS_1E3 ? 1e-3 : WL_LN_EPS;
  ref_layernorm(x, n, d, L->w[W_LN1G], L->w[W_LN1B], eps, h);
  ref_gemm(h, d, n, d, L->w[W_QKV], d, L->w[W_BQKV], 3 * d, qkv, 3 * d);
  ref_attend(qkv, n, d, p->heads, hist, kb, vb, hs, dev, h);
  ref_gemm(h, d, n, d, L->w[W_O], d, dev == WL_DEV_DROP_BO ? NULL : L->w[W_BO], d, o, d);
  ref_add(x, o, nd);
  ref_layernorm(x, n, d, L->w[W_LN2G], L->w[W_LN2B], eps, h);
  ref_gemm(h, d, n, d, L->w[W_1], d, L->w[W_B1], f, t, f);
  ref_gelu(t, (size_t)n * f, dev == WL_DEV_GELU_ERF);
  ref_gemm(t, f, n, f, L->w[W_2], f, dev == WL_DEV_DROP_B2 ? NULL : L->w[W_B2], d, o, d);
  ref_add(x, o, nd);
}

/* The reference outputs in the layout of their ABI symbols: out, and per
 * layer K and V (D1: the whole cache, history rows included; P1: k_out,
 * v_out). */
typedef struct {
  double *out;
  double **k, **v;
  int layers;
} Ref;

/* What the threads of ref_run share: sequence s runs on thread s % nthreads. */
typedef struct {
  const Problem *p;
  const RefLayer *L; /* p->layers of them */
  Ref *r;
  int nseq, n, hist, hs, nthreads;
  WlDeviation dev; /* WL_DEV_NONE: the spec's model */
} RefJob;

typedef struct {
  const RefJob *job;
  int t;
} RefTask;

/* Run every layer over the sequences of one thread (they share nothing). */
static gpointer ref_seq_worker(gpointer data) {
  const RefTask *task = data;
  const RefJob *j = task->job;
  const Problem *p = j->p;
  size_t nd = (size_t)j->n * p->d_model;
  RefWork w = {g_new(double, nd), g_new(double, nd), g_new(double, 3 * nd),
               g_new(double, (size_t)j->n * p->d_ff)};
  for (int s = task->t; s < j->nseq; s += j->nthreads) {
    size_t kvo = (size_t)s * p->heads * j->hs * HEAD_DIM;
    for (int l = 0; l < p->layers; l++)
      ref_block(p, &j->L[l], j->r->out + (size_t)s * nd, j->n, j->hist,
                j->r->k[l] + kvo, j->r->v[l] + kvo, j->hs, j->dev, &w);
  }
  g_free(w.h);
  g_free(w.o);
  g_free(w.qkv);
  g_free(w.t);
  return NULL;
}

/* History K/V of layer l (rows 0..hist-1 of each head) into k, v. */
static void ref_history(const Problem *p, const Abi *abi, uint64_t seed, int l,
                        double *k, double *v) {
  int hist = p->history, hs = p->history + p->steps;
  float *cf = g_new(float, (size_t)hist * HEAD_DIM);
  for (int which = 0; which < 2; which++) {
    char name[32];
    snprintf(name, sizeof name, "%s.l%d", which ? "v_cache" : "k_cache", l);
    int ic = abi_index(abi, name);
    double *dst = which ? v : k;
    for (int h = 0; h < p->heads; h++) {
      gen_rows(abi, ic, seed, h * hs, h * hs + hist, cf);
      for (size_t e = 0; e < (size_t)hist * HEAD_DIM; e++)
        dst[(size_t)h * hs * HEAD_DIM + e] = cf[e];
    }
  }
  g_free(cf);
}

/* Run the whole model for a seed.  D1's steps form one sequence whose first
 * `history` positions are the given cache; P1's sequences are independent
 * and run on up to one thread per processor, or on the calling thread alone
 * with `alone` (each value is computed the same way whatever thread runs
 * it, so the result is deterministic).  dev is WL_DEV_NONE except for
 * wl_write_deviant. */
static void ref_run(const Problem *p, const Abi *abi, uint64_t seed, WlDeviation dev,
                    gboolean alone, Ref *r) {
  RefJob j = {.p = p, .r = r, .dev = dev};
  j.nseq = p->kind == PROB_D1 ? 1 : p->seqs;
  j.n = p->kind == PROB_D1 ? p->steps : p->rows;
  j.hist = p->kind == PROB_D1 ? p->history : 0;
  j.hs = j.hist + j.n;
  size_t kv = (size_t)j.nseq * p->heads * j.hs * HEAD_DIM;
  int ix = abi_index(abi, "x_in");
  float *xf = gen_sym(abi, ix, seed);
  size_t nx = (size_t)abi->syms[ix].rows * p->d_model;
  r->layers = p->layers;
  r->out = g_new(double, nx);
  for (size_t e = 0; e < nx; e++) r->out[e] = xf[e];
  g_free(xf);
  r->k = g_new0(double *, p->layers);
  r->v = g_new0(double *, p->layers);
  RefLayer *L = g_new0(RefLayer, p->layers);
  for (int l = 0; l < p->layers; l++) {
    ref_layer_load(abi, seed, l, &L[l]);
    r->k[l] = g_new0(double, kv);
    r->v[l] = g_new0(double, kv);
    if (j.hist > 0) ref_history(p, abi, seed, l, r->k[l], r->v[l]);
  }
  j.L = L;
  j.nthreads = alone ? 1 : MIN(j.nseq, (int)g_get_num_processors());
  if (j.nthreads < 1) j.nthreads = 1;
  RefTask *tasks = g_new(RefTask, j.nthreads);
  GThread **th = g_new0(GThread *, j.nthreads);
  for (int t = 0; t < j.nthreads; t++) tasks[t] = (RefTask){&j, t};
  for (int t = 1; t < j.nthreads; t++) th[t] = g_thread_new("wl-ref", ref_seq_worker, &tasks[t]);
  ref_seq_worker(&tasks[0]);
  for (int t = 1; t < j.nthreads; t++) g_thread_join(th[t]);
  g_free(th);
  g_free(tasks);
  for (int l = 0; l < p->layers; l++) ref_layer_free(&L[l]);
  g_free(L);
}

/* Free what ref_run allocated. */
static void ref_free(Ref *r) {
  g_free(r->out);
  for (int l = 0; l < r->layers; l++) {
    g_free(r->k[l]);
    g_free(r->v[l]);
  }
  g_free(r->k);
  g_free(r->v);
}

/* ------------------------------------------------------------------- check */

/* Name of element e of checked symbol `sym`, e.g. "out[3][17]",
 * "k_cache.l1[h2][pos130][5]" or "k_out.l0[s1][h2][r17][5]". */
static void loc_name(const Problem *p, const AbiSym *s, uint64_t e, char *buf,
                     size_t len) {
  long r = (long)(e / (uint64_t)s->cols), c = (long)(e % (uint64_t)s->cols);
  if (s->kind == ABI_CACHE) {
    int hs = p->history + p->steps;
    g_snprintf(buf, len, "%s[h%ld][pos%ld][%ld]", s->name, r / hs, r % hs, c);
  } else if (g_str_has_prefix(s->name, "k_out") || g_str_has_prefix(s->name, "v_out")) {
    long per_seq = (long)p->heads * p->rows;
    g_snprintf(buf, len, "%s[s%ld][h%ld][r%ld][%ld]", s->name, r / per_seq,
             (r % per_seq) / p->rows, r % p->rows, c);
  } else {
    g_snprintf(buf, len, "%s[%ld][%ld]", s->name, r, c);
  }
}

/* Compare (hbm != NULL) or write (dst != NULL) elements [e0, e1) of symbol
 * `sym` against / from its reference values want[e0..e1).  Without `want`,
 * the comparison only finds the values whose error is infinite whatever the
 * reference: NaN (never written) and infinities (wl_check's cheap pass). */
static void walk_range(const Problem *p, const AbiSym *s, const double *want,
                       uint64_t e0, uint64_t e1, const float *hbm, float *dst,
                       WlCheck *c) {
  for (uint64_t e = e0; e < e1; e++) {
    if (dst) {
      dst[s->addr / 4 + e] = (float)want[e];
      continue;
    }
    float got = hbm[s->addr / 4 + e];
    double err = want ? fabs((double)got - want[e]) : isfinite(got) ? 0.0 : INFINITY;
    if (isnan(got)) c->unwritten++;
    if (isnan(err)) err = INFINITY;
    c->checked++;
    if (err > c->max_abs_err) {
      c->max_abs_err = err;
      loc_name(p, s, e, c->worst, sizeof c->worst);
    }
  }
}

/* Visit every checked value: out, then per layer the new K and V (D1: cache
 * rows history..history+steps-1 of each head; P1: all of k_out, v_out).
 * r == NULL: the cheap pass of wl_check (no reference). */
static void walk(const Problem *p, const Abi *abi, const Ref *r, const float *hbm,
                 float *dst, WlCheck *c) {
  const AbiSym *out = wl_abi_lookup(abi, "out");
  walk_range(p, out, r ? r->out : NULL, 0, out->bytes / 4, hbm, dst, c);
  for (int l = 0; l < p->layers; l++)
    for (int which = 0; which < 2; which++) {
      char name[32];
      const char *base = p->kind == PROB_D1 ? (which ? "v_cache" : "k_cache")
                                            : (which ? "v_out" : "k_out");
      snprintf(name, sizeof name, "%s.l%d", base, l);
      const AbiSym *s = wl_abi_lookup(abi, name);
      const double *want = !r ? NULL : which ? r->v[l] : r->k[l];
      if (p->kind == PROB_P1) {
        walk_range(p, s, want, 0, s->bytes / 4, hbm, dst, c);
        continue;
      }
      uint64_t hs = (uint64_t)(p->history + p->steps);
      for (uint64_t h = 0; h < (uint64_t)p->heads; h++)
        walk_range(p, s, want, (h * hs + (uint64_t)p->history) * HEAD_DIM,
                   (h + 1) * hs * HEAD_DIM, hbm, dst, c);
    }
}

/* The cheap pass of a check: a value that is NaN (never written) or
 * infinite has an infinite error against any finite reference, so if there
 * is one, max_abs_err is infinite, `worst` is the first such value and the
 * counts are those of the full comparison: the result is the same without
 * the reference (which takes seconds and gigabytes at the largest dims).
 * TRUE when that settles the check. */
static gboolean check_cheap(const Problem *p, const Abi *abi, const float *hbm, WlCheck *out) {
  memset(out, 0, sizeof *out);
  walk(p, abi, NULL, hbm, NULL, out);
  if (isinf(out->max_abs_err)) {
    out->pass = FALSE;
    return TRUE;
  }
  memset(out, 0, sizeof *out);
  return FALSE;
}

/* Max abs error of the program's outputs against the reference of the seed;
 * NaN (never written) counts as an infinite error.  `worst` names the first
 * location with the largest error ("" when every value is exact). */
void wl_check(const Problem *p, const Abi *abi, uint64_t seed, const float *hbm,
              WlCheck *out) {
  if (check_cheap(p, abi, hbm, out)) return;
  Ref r;
  ref_run(p, abi, seed, WL_DEV_NONE, FALSE, &r);
  walk(p, abi, &r, hbm, NULL, out);
  ref_free(&r);
  out->pass = out->max_abs_err <= WL_TOLERANCE && out->unwritten == 0;
}

struct WlRef {
  Ref r;
};

WlRef *wl_reference(const Problem *p, const Abi *abi, uint64_t seed) {
  WlRef *w = g_new0(WlRef, 1);
  ref_run(p, abi, seed, WL_DEV_NONE, TRUE, &w->r);
  return w;
}

void wl_reference_free(WlRef *w) {
  if (!w) return;
  ref_free(&w->r);
  g_free(w);
}

void wl_check_ref(const Problem *p, const Abi *abi, const WlRef *ref, const float *hbm,
                  WlCheck *out) {
  if (check_cheap(p, abi, hbm, out)) return;
  walk(p, abi, &ref->r, hbm, NULL, out);
  out->pass = out->max_abs_err <= WL_TOLERANCE && out->unwritten == 0;
}

/* The reference outputs rounded to float, written where the program must
 * write them (out and the new K/V): a correct HBM image for tests. */
void wl_write_reference(const Problem *p, const Abi *abi, uint64_t seed, float *hbm) {
  wl_write_deviant(p, abi, seed, WL_DEV_NONE, hbm);
}

/* For tests: the outputs of a model with one known bug, computed like the
 * reference (in double, rounded to float once) and written where a program
 * writes them. */
void wl_write_deviant(const Problem *p, const Abi *abi, uint64_t seed, WlDeviation dev,
                      float *hbm) {
  Ref r;
  ref_run(p, abi, seed, dev, FALSE, &r);
  walk(p, abi, &r, NULL, hbm, NULL);
  ref_free(&r);
}

/* ORDER-MATTERS: indexed by WlDeviation. */
static const char *const wl_dev_names[WL_DEV_COUNT] = {
    "none", "gelu-erf", "ln-eps-1e-6", "ln-eps-1e-3", "scale-33",
    "drop-bo", "drop-b2", "mask-next", "mask-self"};

const char *wl_deviation_name(WlDeviation dev) {
  return (int)dev >= 0 && dev < WL_DEV_COUNT ? wl_dev_names[dev] : "?";
}

/* Every deviation is a possible program on both problems, except that a D1
 * step cannot see the next step's position (its input is not released). */
gboolean wl_deviation_applies(const Problem *p, WlDeviation dev) {
  return (int)dev >= 0 && dev < WL_DEV_COUNT && !(dev == WL_DEV_MASK_NEXT && p->kind == PROB_D1);
}
