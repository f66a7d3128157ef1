/* test_workload.c - problems, the ABI memory map, the data PRNG, the host's
 * release of D1 inputs, the reference (against an independent naive
 * implementation) and the check (docs/workloads.md). */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "tests.h"

/* ------------------------------------------------------------- helpers */

/* A problem of a kind with some keys changed ("key", value, ..., NULL). */
static Problem mk(ProblemKind kind, ...) {
  Problem p;
  wl_problem_default(&p, kind);
  va_list ap;
  va_start(ap, kind);
  for (const char *k = va_arg(ap, const char *); k; k = va_arg(ap, const char *)) {
    long v = va_arg(ap, long);
    g_autoptr(GError) err = NULL;
    ck_assert_msg(wl_problem_set(&p, k, v, &err), "%s", err ? err->message : "");
  }
  va_end(ap);
  g_autoptr(GError) err = NULL;
  ck_assert_msg(wl_problem_validate(&p, &err), "%s", err ? err->message : "");
  return p;
}

/* The small problems most tests run on (fast under the sanitizers). */
static Problem tiny_d1(void) {
  return mk(PROB_D1, "d_model", 64L, "heads", 2L, "d_ff", 96L, "layers", 2L, "history",
            32L, "steps", 3L, NULL);
}
static Problem tiny_p1(void) {
  return mk(PROB_P1, "d_model", 64L, "heads", 2L, "d_ff", 64L, "layers", 2L, "seqs", 2L,
            "rows", 32L, NULL);
}

/* HBM of a problem initialised for a seed (caller frees with g_free). */
static float *mk_hbm(const Problem *p, const Abi *abi, uint64_t seed) {
  float *h = g_malloc(abi->hbm_bytes);
  wl_init_hbm(p, abi, seed, h);
  return h;
}

static const float *symf(const float *hbm, const Abi *abi, const char *name) {
  const AbiSym *s = wl_abi_lookup(abi, name);
  ck_assert_msg(s != NULL, "no symbol %s", name);
  return hbm + s->addr / 4;
}

/* Check reports every passing ck_assert through a file, so loops over many
 * values count their failures and assert once. */
#define EXPECT(cond) (nbad += !(cond))

/* docs/workloads.md "Data", re-implemented from the text. */
static uint64_t doc_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static double doc_u(uint64_t seed, int sym, uint64_t e) {
  uint64_t key = doc_mix(seed * 0x9E3779B97F4A7C15ull + (uint64_t)(sym + 1) * 0xD1B54A32D192ED03ull);
  uint64_t u = doc_mix(key + (e + 1) * 0x9E3779B97F4A7C15ull);
  return (double)(u >> 40) * 0x1p-23 - 1.0;
}

/* ------------------------------------------------------------ problems */

START_TEST(test_problem_defaults) {
  Problem d, p;
  wl_problem_default(&d, PROB_D1);
  wl_problem_default(&p, PROB_P1);
  ck_assert_int_eq(d.d_model, 128);
  ck_assert_int_eq(d.heads, 4);
  ck_assert_int_eq(d.d_ff, 512);
  ck_assert_int_eq(d.layers, 2);
  ck_assert_int_eq(d.history, 128);
  ck_assert_int_eq(d.steps, 8);
  ck_assert_int_eq(d.seqs + d.rows, 0);
  ck_assert_int_eq(p.d_model, 256);
  ck_assert_int_eq(p.heads, 8);
  ck_assert_int_eq(p.d_ff, 1024);
  ck_assert_int_eq(p.layers, 2);
  ck_assert_int_eq(p.seqs, 2);
  ck_assert_int_eq(p.rows, 256);
  ck_assert_int_eq(p.history + p.steps, 0);
  ck_assert(wl_problem_validate(&d, NULL));
  ck_assert(wl_problem_validate(&p, NULL));
  ck_assert_str_eq(wl_problem_name(PROB_D1), "d1");
  ck_assert_str_eq(wl_problem_name(PROB_P1), "p1");
  g_autofree char *cd = wl_problem_canonical(&d);
  g_autofree char *cp = wl_problem_canonical(&p);
  ck_assert_str_eq(cd, ".problem d1 d_model=128 heads=4 d_ff=512 layers=2 history=128 steps=8");
  ck_assert_str_eq(cp, ".problem p1 d_model=256 heads=8 d_ff=1024 layers=2 seqs=2 rows=256");
}
END_TEST

START_TEST(test_problem_set) {
  Problem p = mk(PROB_D1, "d_model", 1024L, "heads", 32L, "d_ff", 4096L, "layers", 8L,
                 "history", 0L, "steps", 64L, NULL);
  g_autofree char *c = wl_problem_canonical(&p);
  ck_assert_str_eq(c, ".problem d1 d_model=1024 heads=32 d_ff=4096 layers=8 history=0 steps=64");
  Problem q = mk(PROB_P1, "d_model", 32L, "heads", 1L, "d_ff", 32L, "layers", 1L, "seqs", 8L,
                 "rows", 1024L, NULL);
  g_autofree char *c2 = wl_problem_canonical(&q);
  ck_assert_str_eq(c2, ".problem p1 d_model=32 heads=1 d_ff=32 layers=1 seqs=8 rows=1024");
}
END_TEST

START_TEST(test_problem_errors) {
  struct {
    ProblemKind kind;
    const char *key;
    long v;
    const char *msg;
  } cases[] = {
      {PROB_D1, "d_model", 100, "d_model=100 must be a multiple of 32"},
      {PROB_D1, "d_model", 0, "d_model=0 out of range 32..1024"},
      {PROB_P1, "d_model", 2048, "d_model=2048 out of range 32..1024"},
      {PROB_D1, "heads", 0, "heads=0 out of range 1..32"},
      {PROB_D1, "heads", 33, "heads=33 out of range 1..32"},
      {PROB_D1, "d_ff", 4128, "d_ff=4128 out of range 32..4096"},
      {PROB_P1, "d_ff", 48, "d_ff=48 must be a multiple of 32"},
      {PROB_D1, "layers", 9, "layers=9 out of range 1..8"},
      {PROB_D1, "history", 16, "history=16 must be a multiple of 32"},
      {PROB_D1, "history", -32, "history=-32 out of range 0..1024"},
      {PROB_D1, "steps", 0, "steps=0 out of range 1..64"},
      {PROB_D1, "steps", 65, "steps=65 out of range 1..64"},
      {PROB_P1, "seqs", 9, "seqs=9 out of range 1..8"},
      {PROB_P1, "rows", 48, "rows=48 must be a multiple of 32"},
      {PROB_P1, "rows", 0, "rows=0 out of range 32..1024"},
      {PROB_P1, "history", 128, "'history' does not apply to p1"},
      {PROB_P1, "steps", 8, "'steps' does not apply to p1"},
      {PROB_D1, "seqs", 2, "'seqs' does not apply to d1"},
      {PROB_D1, "rows", 256, "'rows' does not apply to d1"},
      {PROB_D1, "d_head", 32, "unknown problem parameter 'd_head'"},
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
    Problem p, before;
    wl_problem_default(&p, cases[i].kind);
    before = p;
    g_autoptr(GError) err = NULL;
    ck_assert(!wl_problem_set(&p, cases[i].key, cases[i].v, &err));
    ck_assert(err != NULL && err->domain == WL_ERROR);
    ck_assert_str_eq(err->message, cases[i].msg);
    ck_assert(memcmp(&p, &before, sizeof p) == 0); /* unchanged on error */
  }
}
END_TEST

START_TEST(test_problem_validate) {
  Problem p;
  wl_problem_default(&p, PROB_D1);
  ck_assert(wl_problem_set(&p, "heads", 3, NULL)); /* legal alone, not with d_model 128 */
  g_autoptr(GError) err = NULL;
  ck_assert(!wl_problem_validate(&p, &err));
  ck_assert(err->domain == WL_ERROR);
  ck_assert_str_eq(err->message, "d_model=128 with heads=3: head_dim must be 32 (d_model = 32*heads)");
  /* a hand-built struct is checked key by key too */
  wl_problem_default(&p, PROB_P1);
  p.rows = 40;
  g_autoptr(GError) e2 = NULL;
  ck_assert(!wl_problem_validate(&p, &e2));
  ck_assert_str_eq(e2->message, "rows=40 must be a multiple of 32");
  wl_problem_default(&p, PROB_P1);
  p.steps = 8;
  g_autoptr(GError) e3 = NULL;
  ck_assert(!wl_problem_validate(&p, &e3));
  ck_assert_str_eq(e3->message, "'steps' does not apply to p1");
}
END_TEST

/* ----------------------------------------------------------------- ABI */

/* Invariants of any layout: order, names, kinds, shapes, alignment, sizes. */
static void check_layout(const Problem *p) {
  Abi abi;
  wl_abi_build(p, &abi);
  int L = p->layers;
  ck_assert_int_eq(abi.n, 1 + 12 * L + 2 * L + 2);
  static const char *wn[12] = {"ln1_g", "ln1_b", "wqkv", "bqkv", "wo", "bo",
                               "ln2_g", "ln2_b", "w1",   "b1",   "w2", "b2"};
  int d = p->d_model, f = p->d_ff;
  int wr[12] = {1, 1, d, 1, d, 1, 1, 1, d, 1, f, 1};
  int wc[12] = {d, d, 3 * d, 3 * d, d, d, d, d, f, f, d, d};
  int nrows = p->kind == PROB_D1 ? p->steps : p->seqs * p->rows;
  int kvrows = p->kind == PROB_D1 ? p->heads * (p->history + p->steps)
                                  : p->seqs * p->heads * p->rows;
  ck_assert_str_eq(abi.syms[0].name, "x_in");
  ck_assert_int_eq(abi.syms[0].kind, ABI_INPUT);
  ck_assert_int_eq(abi.syms[0].rows, nrows);
  ck_assert_int_eq(abi.syms[0].cols, d);
  for (int l = 0; l < L; l++)
    for (int w = 0; w < 12; w++) {
      const AbiSym *s = &abi.syms[1 + 12 * l + w];
      g_autofree char *nm = g_strdup_printf("%s.l%d", wn[w], l);
      ck_assert_str_eq(s->name, nm);
      ck_assert_int_eq(s->kind, ABI_WEIGHT);
      ck_assert_int_eq(s->rows, wr[w]);
      ck_assert_int_eq(s->cols, wc[w]);
    }
  for (int l = 0; l < L; l++)
    for (int kv = 0; kv < 2; kv++) {
      const AbiSym *s = &abi.syms[1 + 12 * L + 2 * l + kv];
      g_autofree char *nm =
          g_strdup_printf("%s_%s.l%d", kv ? "v" : "k", p->kind == PROB_D1 ? "cache" : "out", l);
      ck_assert_str_eq(s->name, nm);
      ck_assert_int_eq(s->kind, p->kind == PROB_D1 ? ABI_CACHE : ABI_OUTPUT);
      ck_assert_int_eq(s->rows, kvrows);
      ck_assert_int_eq(s->cols, 32);
    }
  const AbiSym *out = &abi.syms[abi.n - 2], *scr = &abi.syms[abi.n - 1];
  ck_assert_str_eq(out->name, "out");
  ck_assert_int_eq(out->kind, ABI_OUTPUT);
  ck_assert_int_eq(out->rows, nrows);
  ck_assert_int_eq(out->cols, d);
  ck_assert_str_eq(scr->name, "scratch");
  ck_assert_int_eq(scr->kind, ABI_SCRATCH);
  ck_assert_uint_eq(scr->bytes, WL_SCRATCH_BYTES);
  ck_assert_uint_eq(abi.hbm_bytes, scr->addr + scr->bytes);
  ck_assert_uint_eq(abi.syms[0].addr, 0);
  for (int i = 0; i < abi.n; i++) {
    const AbiSym *s = &abi.syms[i];
    ck_assert_uint_eq(s->addr % 4096, 0);
    ck_assert_uint_eq(s->bytes, (uint64_t)s->rows * s->cols * 4);
    ck_assert_ptr_eq(wl_abi_lookup(&abi, s->name), s);
    if (i > 0) { /* address order, no overlap, no gap beyond alignment */
      const AbiSym *prev = &abi.syms[i - 1];
      ck_assert_uint_eq(s->addr, (prev->addr + prev->bytes + 4095) / 4096 * 4096);
    }
  }
  ck_assert_ptr_null(wl_abi_lookup(&abi, "wqkv"));
  ck_assert_ptr_null(wl_abi_lookup(&abi, "wqkv.l9"));
  ck_assert_ptr_null(wl_abi_lookup(&abi, ""));
  wl_abi_clear(&abi);
  ck_assert_ptr_null(abi.syms);
  ck_assert_int_eq(abi.n, 0);
}

START_TEST(test_abi_layouts) {
  Problem d, p;
  wl_problem_default(&d, PROB_D1);
  wl_problem_default(&p, PROB_P1);
  check_layout(&d);
  check_layout(&p);
  Problem v[] = {tiny_d1(), tiny_p1(),
                 mk(PROB_D1, "history", 0L, "steps", 1L, "layers", 1L, NULL),
                 mk(PROB_D1, "d_model", 1024L, "heads", 32L, "d_ff", 4096L, "layers", 8L,
                    "history", 1024L, "steps", 64L, NULL),
                 mk(PROB_P1, "seqs", 1L, "rows", 32L, "layers", 8L, NULL)};
  for (unsigned i = 0; i < G_N_ELEMENTS(v); i++) check_layout(&v[i]);
}
END_TEST

/* The frozen default maps (docs/workloads.md lists them all). */
START_TEST(test_abi_frozen) {
  Problem d, p;
  Abi a;
  wl_problem_default(&d, PROB_D1);
  wl_abi_build(&d, &a);
  ck_assert_uint_eq(wl_abi_lookup(&a, "wqkv.l0")->addr, 0x3000);
  ck_assert_uint_eq(wl_abi_lookup(&a, "w2.l1")->addr, 0x150000);
  ck_assert_uint_eq(wl_abi_lookup(&a, "k_cache.l0")->addr, 0x191000);
  ck_assert_uint_eq(wl_abi_lookup(&a, "v_cache.l1")->addr, 0x1c4000);
  ck_assert_uint_eq(wl_abi_lookup(&a, "out")->addr, 0x1d5000);
  ck_assert_uint_eq(wl_abi_lookup(&a, "scratch")->addr, 0x1d6000);
  ck_assert_uint_eq(a.hbm_bytes, 0x9d6000);
  wl_abi_clear(&a);
  wl_problem_default(&p, PROB_P1);
  wl_abi_build(&p, &a);
  ck_assert_uint_eq(wl_abi_lookup(&a, "ln1_g.l0")->addr, 0x80000);
  ck_assert_uint_eq(wl_abi_lookup(&a, "w1.l1")->addr, 0x48e000);
  ck_assert_uint_eq(wl_abi_lookup(&a, "k_out.l0")->addr, 0x690000);
  ck_assert_uint_eq(wl_abi_lookup(&a, "v_out.l1")->addr, 0x810000);
  ck_assert_uint_eq(wl_abi_lookup(&a, "out")->addr, 0x890000);
  ck_assert_uint_eq(a.hbm_bytes, 0x1110000);
  wl_abi_clear(&a);
}
END_TEST

/* ---------------------------------------------------------------- data */

START_TEST(test_data_formula) {
  Problem p = tiny_d1();
  Abi abi;
  wl_abi_build(&p, &abi);
  g_autofree float *h = mk_hbm(&p, &abi, 7);
  long nbad = 0;
  for (int i = 0; i < abi.n; i++) {
    const AbiSym *s = &abi.syms[i];
    if (s->kind != ABI_WEIGHT) continue;
    const float *v = h + s->addr / 4;
    for (uint64_t e = 0; e < s->bytes / 4; e += 7) {
      double u = doc_u(7, i, e), want;
      if (strncmp(s->name, "ln", 2) == 0 && s->name[4] == 'g') want = 1.0 + 0.1 * u;
      else if (s->name[0] == 'b' || strncmp(s->name, "ln", 2) == 0) want = 0.1 * u;
      else want = u / sqrt((double)s->rows);
      EXPECT(v[e] == (float)want);
    }
    ck_assert_msg(nbad == 0, "%s: %ld values differ", s->name, nbad);
  }
  /* history K/V: U at the element's row-major index in the symbol */
  int ik = (int)(wl_abi_lookup(&abi, "k_cache.l1") - abi.syms);
  const float *kc = symf(h, &abi, "k_cache.l1");
  int span = p.history + p.steps;
  for (int hd = 0; hd < p.heads; hd++)
    for (int pos = 0; pos < p.history; pos++)
      for (int c = 0; c < 32; c++) {
        uint64_t e = ((uint64_t)hd * span + pos) * 32 + c;
        EXPECT(kc[e] == (float)doc_u(7, ik, e));
      }
  ck_assert_int_eq(nbad, 0);
  /* U itself is exact in FP32 and lies in [-1, 1) */
  for (uint64_t e = 0; e < 100000; e++) {
    double u = doc_u(23, 5, e);
    EXPECT(u >= -1.0 && u < 1.0);
    EXPECT((double)(float)u == u);
  }
  ck_assert_int_eq(nbad, 0);
  wl_abi_clear(&abi);
}
END_TEST

START_TEST(test_data_ranges_and_seeds) {
  Problem p;
  wl_problem_default(&p, PROB_D1);
  Abi abi;
  wl_abi_build(&p, &abi);
  g_autofree float *a = mk_hbm(&p, &abi, 7);
  g_autofree float *b = mk_hbm(&p, &abi, 7);
  g_autofree float *c = mk_hbm(&p, &abi, 13);
  ck_assert(memcmp(a, b, abi.hbm_bytes) == 0); /* deterministic, NaNs included */
  for (int i = 0; i < abi.n; i++) {
    const AbiSym *s = &abi.syms[i];
    if (s->kind != ABI_WEIGHT) continue;
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    long differ = 0, n = (long)(s->bytes / 4), nbad = 0;
    for (long e = 0; e < n; e++) {
      float v = a[s->addr / 4 + e];
      EXPECT(isfinite(v));
      lo = fmin(lo, v);
      hi = fmax(hi, v);
      sum += v;
      differ += v != c[s->addr / 4 + e];
    }
    ck_assert_int_eq(nbad, 0);
    double bound = s->name[0] == 'w' ? 1.0 / sqrt((double)s->rows) : 0.1;
    double centre = strncmp(s->name, "ln", 2) == 0 && s->name[4] == 'g' ? 1.0 : 0.0;
    ck_assert_msg(lo >= centre - bound && hi < centre + bound, "%s", s->name);
    ck_assert_msg(hi - lo > bound, "%s spread", s->name); /* not degenerate */
    ck_assert_msg(fabs(sum / n - centre) < bound * 0.3, "%s mean", s->name);
    ck_assert_msg(differ > n * 9 / 10, "%s: seeds 7 and 13 agree too often", s->name);
  }
  /* symbols differ from each other (independent streams) */
  const float *g0 = symf(a, &abi, "ln1_b.l0"), *g1 = symf(a, &abi, "ln2_b.l0");
  ck_assert(memcmp(g0, g1, 128 * 4) != 0);
  wl_abi_clear(&abi);
}
END_TEST

START_TEST(test_init_d1) {
  Problem p = tiny_d1();
  Abi abi;
  wl_abi_build(&p, &abi);
  g_autofree float *h = mk_hbm(&p, &abi, 11);
  const AbiSym *x = wl_abi_lookup(&abi, "x_in");
  long nbad = 0;
  for (uint64_t e = 0; e < x->bytes / 4; e++) EXPECT(isnan(h[x->addr / 4 + e]));
  int span = p.history + p.steps;
  for (int l = 0; l < p.layers; l++)
    for (int kv = 0; kv < 2; kv++) {
      g_autofree char *nm = g_strdup_printf("%s_cache.l%d", kv ? "v" : "k", l);
      const float *cc = symf(h, &abi, nm);
      for (int hd = 0; hd < p.heads; hd++)
        for (int pos = 0; pos < span; pos++)
          for (int c = 0; c < 32; c++) {
            float v = cc[((size_t)hd * span + pos) * 32 + c];
            EXPECT(pos < p.history ? isfinite(v) && fabsf(v) <= 1.0f : isnan(v));
          }
    }
  const AbiSym *o = wl_abi_lookup(&abi, "out"), *sc = wl_abi_lookup(&abi, "scratch");
  for (uint64_t e = 0; e < o->bytes / 4; e++) EXPECT(isnan(h[o->addr / 4 + e]));
  for (uint64_t e = 0; e < sc->bytes / 4; e++) EXPECT(h[sc->addr / 4 + e] == 0.0f);
  /* alignment gaps are zero too (no uninitialised memory) */
  const AbiSym *b = wl_abi_lookup(&abi, "bo.l0");
  ck_assert_uint_gt(b[1].addr, b->addr + b->bytes);
  for (uint64_t a = b->addr + b->bytes; a < b[1].addr; a += 4) EXPECT(h[a / 4] == 0.0f);
  ck_assert_int_eq(nbad, 0);
  wl_abi_clear(&abi);
}
END_TEST

START_TEST(test_init_p1) {
  Problem p = tiny_p1();
  Abi abi;
  wl_abi_build(&p, &abi);
  g_autofree float *h = mk_hbm(&p, &abi, 7);
  const AbiSym *x = wl_abi_lookup(&abi, "x_in");
  long nbad = 0;
  for (uint64_t e = 0; e < x->bytes / 4; e++) EXPECT(h[x->addr / 4 + e] == (float)doc_u(7, 0, e));
  for (int i = 0; i < abi.n; i++)
    if (abi.syms[i].kind == ABI_OUTPUT)
      for (uint64_t e = 0; e < abi.syms[i].bytes / 4; e++)
        EXPECT(isnan(h[abi.syms[i].addr / 4 + e]));
  ck_assert_int_eq(nbad, 0);
  wl_abi_clear(&abi);
}
END_TEST

START_TEST(test_release_one_row) {
  Problem p = tiny_d1();
  Abi abi;
  wl_abi_build(&p, &abi);
  g_autofree float *h = mk_hbm(&p, &abi, 13);
  g_autofree float *before = g_memdup2(h, abi.hbm_bytes);
  const AbiSym *x = wl_abi_lookup(&abi, "x_in");
  wl_release_input(&p, &abi, 13, 1, h);
  size_t n = abi.hbm_bytes / 4, row0 = x->addr / 4 + (size_t)p.d_model;
  long nbad = 0;
  for (size_t i = 0; i < n; i++) {
    if (i >= row0 && i < row0 + (size_t)p.d_model)
      EXPECT(h[i] == (float)doc_u(13, 0, i - x->addr / 4));
    else
      EXPECT(memcmp(&h[i], &before[i], 4) == 0);
  }
  ck_assert_int_eq(nbad, 0);
  /* out-of-range steps are ignored */
  memcpy(before, h, abi.hbm_bytes);
  wl_release_input(&p, &abi, 13, p.steps, h);
  wl_release_input(&p, &abi, 13, -1, h);
  ck_assert(memcmp(before, h, abi.hbm_bytes) == 0);
  wl_abi_clear(&abi);
}
END_TEST

/* ----------------------------------------------- independent reference */

/* Naive double implementation, straight from docs/workloads.md: one row at a
 * time, as a decoder would run it, dot products written out. */
static void naive_ln(const double *x, int d, const float *g, const float *b, double *y) {
  double mean = 0, var = 0;
  for (int c = 0; c < d; c++) mean += x[c];
  mean /= d;
  for (int c = 0; c < d; c++) var += (x[c] - mean) * (x[c] - mean);
  var /= d;
  for (int c = 0; c < d; c++) y[c] = (x[c] - mean) / sqrt(var + WL_LN_EPS) * g[c] + b[c];
}

/* y[n] = x[k] . W[k x n] + bias */
static void naive_mv(const double *x, int k, const float *w, const float *bias, int n,
                     double *y) {
  for (int j = 0; j < n; j++) {
    double s = 0;
    for (int i = 0; i < k; i++) s += x[i] * w[(size_t)i * n + j];
    y[j] = s + bias[j];
  }
}

/* softmax(q . K^T / sqrt(32)) . V over npos positions, by slices of 5 merged
 * with (m, s, u) as the seeds' decoder did: a second formulation. */
static void naive_attn(const double *q, const double *K, const double *V, int npos,
                       double *o) {
  double M = -INFINITY, S = 0, U[32] = {0};
  for (int p0 = 0; p0 < npos; p0 += 5) {
    int p1 = MIN(npos, p0 + 5);
    double m = -INFINITY, s = 0, u[32] = {0}, sc[5];
    for (int p = p0; p < p1; p++) {
      double dot = 0;
      for (int c = 0; c < 32; c++) dot += q[c] * K[p * 32 + c];
      sc[p - p0] = dot / sqrt(32.0);
      m = fmax(m, sc[p - p0]);
    }
    for (int p = p0; p < p1; p++) {
      double e = exp(sc[p - p0] - m);
      s += e;
      for (int c = 0; c < 32; c++) u[c] += e * V[p * 32 + c];
    }
    double Mn = fmax(M, m), a = exp(M - Mn), b = exp(m - Mn);
    S = S * a + s * b;
    for (int c = 0; c < 32; c++) U[c] = U[c] * a + u[c] * b;
    M = Mn;
  }
  for (int c = 0; c < 32; c++) o[c] = U[c] / S;
}

/* Symbol "NAME.lL" of the image. */
static const float *lsym(const float *hbm, const Abi *abi, const char *name, int l) {
  char buf[32];
  g_snprintf(buf, sizeof buf, "%s.l%d", name, l);
  return symf(hbm, abi, buf);
}

/* Run `n` rows of one sequence through all layers; x[n x d] in place.  Caches
 * (per layer, [head][hs][32]) hold `hist` given positions; row t's k, v go to
 * position hist+t. */
static void naive_seq(const Problem *p, const Abi *abi, const float *hbm, double *x, int n,
                      int hist, int hs, double **kc, double **vc) {
  int d = p->d_model, f = p->d_ff;
  double *h = g_new(double, 3 * d + f), *qkv = g_new(double, 3 * d);
  double *o = g_new(double, d), *t = g_new(double, f), *ao = g_new(double, d);
  for (int r = 0; r < n; r++) {
    double *xr = x + (size_t)r * d;
    for (int l = 0; l < p->layers; l++) {
#define W(nm) lsym(hbm, abi, nm, l)
      naive_ln(xr, d, W("ln1_g"), W("ln1_b"), h);
      naive_mv(h, d, W("wqkv"), W("bqkv"), 3 * d, qkv);
      for (int hd = 0; hd < p->heads; hd++) {
        for (int c = 0; c < 32; c++) {
          kc[l][((size_t)hd * hs + hist + r) * 32 + c] = qkv[d + hd * 32 + c];
          vc[l][((size_t)hd * hs + hist + r) * 32 + c] = qkv[2 * d + hd * 32 + c];
        }
        naive_attn(qkv + hd * 32, kc[l] + (size_t)hd * hs * 32, vc[l] + (size_t)hd * hs * 32,
                   hist + r + 1, ao + hd * 32);
      }
      naive_mv(ao, d, W("wo"), W("bo"), d, o);
      for (int c = 0; c < d; c++) xr[c] += o[c];
      naive_ln(xr, d, W("ln2_g"), W("ln2_b"), h);
      naive_mv(h, d, W("w1"), W("b1"), f, t);
      for (int j = 0; j < f; j++)
        t[j] = 0.5 * t[j] * (1 + tanh(sqrt(2 / G_PI) * (t[j] + 0.044715 * pow(t[j], 3))));
      naive_mv(t, f, W("w2"), W("b2"), d, o);
      for (int c = 0; c < d; c++) xr[c] += o[c];
#undef W
    }
  }
  g_free(h);
  g_free(qkv);
  g_free(o);
  g_free(t);
  g_free(ao);
}

/* Max |naive - wl_write_reference| over every checked value. */
static double naive_vs_reference(const Problem *p, uint64_t seed) {
  Abi abi;
  wl_abi_build(p, &abi);
  g_autofree float *h = mk_hbm(p, &abi, seed);
  for (int t = 0; p->kind == PROB_D1 && t < p->steps; t++) wl_release_input(p, &abi, seed, t, h);
  g_autofree float *img = g_memdup2(h, abi.hbm_bytes);
  wl_write_reference(p, &abi, seed, img);
  int d = p->d_model, nseq = p->kind == PROB_D1 ? 1 : p->seqs;
  int n = p->kind == PROB_D1 ? p->steps : p->rows, hist = p->kind == PROB_D1 ? p->history : 0;
  int hs = hist + n;
  double worst = 0;
  for (int s = 0; s < nseq; s++) {
    double *x = g_new(double, (size_t)n * d), *kc[8], *vc[8];
    const float *xin = symf(h, &abi, "x_in") + (size_t)s * n * d;
    for (size_t e = 0; e < (size_t)n * d; e++) x[e] = xin[e];
    for (int l = 0; l < p->layers; l++) {
      kc[l] = g_new0(double, (size_t)p->heads * hs * 32);
      vc[l] = g_new0(double, (size_t)p->heads * hs * 32);
      if (p->kind == PROB_D1) {
        g_autofree char *kn = g_strdup_printf("k_cache.l%d", l);
        g_autofree char *vn = g_strdup_printf("v_cache.l%d", l);
        const float *K = symf(h, &abi, kn), *V = symf(h, &abi, vn);
        for (size_t e = 0; e < (size_t)p->heads * hs * 32; e++) {
          kc[l][e] = K[e]; /* NaN in the new rows: overwritten before use */
          vc[l][e] = V[e];
        }
      }
    }
    naive_seq(p, &abi, h, x, n, hist, hs, kc, vc);
    const float *out = symf(img, &abi, "out") + (size_t)s * n * d;
    for (size_t e = 0; e < (size_t)n * d; e++) worst = fmax(worst, fabs(out[e] - x[e]));
    for (int l = 0; l < p->layers; l++) {
      g_autofree char *kn = g_strdup_printf("%s.l%d", p->kind == PROB_D1 ? "k_cache" : "k_out", l);
      g_autofree char *vn = g_strdup_printf("%s.l%d", p->kind == PROB_D1 ? "v_cache" : "v_out", l);
      const float *K = symf(img, &abi, kn) + (size_t)s * p->heads * hs * 32;
      const float *V = symf(img, &abi, vn) + (size_t)s * p->heads * hs * 32;
      for (int hd = 0; hd < p->heads; hd++)
        for (int pos = hist; pos < hs; pos++)
          for (int c = 0; c < 32; c++) {
            size_t e = ((size_t)hd * hs + pos) * 32 + c;
            worst = fmax(worst, fabs(K[e] - kc[l][e]));
            worst = fmax(worst, fabs(V[e] - vc[l][e]));
          }
      g_free(kc[l]);
      g_free(vc[l]);
    }
    g_free(x);
  }
  wl_abi_clear(&abi);
  return worst;
}

START_TEST(test_naive_helpers) {
  /* LN of [1, 2, 3, 4]: mean 2.5, biased variance 1.25 */
  double x[4] = {1, 2, 3, 4}, y[4];
  float g[4] = {1, 1, 1, 1}, b[4] = {0, 0, 0, 0}, g2[4] = {2, 2, 2, 2}, b2[4] = {1, 1, 1, 1};
  naive_ln(x, 4, g, b, y);
  ck_assert_double_eq_tol(y[0], -1.5 / sqrt(1.25001), 1e-15);
  ck_assert_double_eq_tol(y[1], -0.5 / sqrt(1.25001), 1e-15);
  ck_assert_double_eq_tol(y[0], -1.3416354, 1e-7);
  ck_assert_double_eq_tol(y[0] + y[1] + y[2] + y[3], 0.0, 1e-15);
  naive_ln(x, 4, g2, b2, y);
  ck_assert_double_eq_tol(y[3], 1 + 2 * 1.5 / sqrt(1.25001), 1e-14);
  /* the seeds' merge example: slices (m=10, s=2), (m=8, s=3) -> 2 + 3e^-2 */
  ck_assert_double_eq_tol(2 * exp(10 - 10.0) + 3 * exp(8 - 10.0), 2.406, 1e-3);
  /* sliced (m, s, u) attention equals the one-pass softmax */
  double q[32], K[13 * 32], V[13 * 32], o[32], ref[32] = {0}, sc[13], m = -INFINITY, s = 0;
  for (int i = 0; i < 32; i++) q[i] = doc_u(1, 0, i) * 3;
  for (int i = 0; i < 13 * 32; i++) K[i] = doc_u(1, 1, i), V[i] = doc_u(1, 2, i);
  for (int p = 0; p < 13; p++) {
    double dot = 0;
    for (int c = 0; c < 32; c++) dot += q[c] * K[p * 32 + c];
    sc[p] = dot / sqrt(32.0);
    m = fmax(m, sc[p]);
  }
  for (int p = 0; p < 13; p++) {
    s += exp(sc[p] - m);
    for (int c = 0; c < 32; c++) ref[c] += exp(sc[p] - m) * V[p * 32 + c];
  }
  naive_attn(q, K, V, 13, o);
  for (int c = 0; c < 32; c++) ck_assert_double_eq_tol(o[c], ref[c] / s, 1e-14);
  /* one position: the output is its V row */
  naive_attn(q, K, V, 1, o);
  for (int c = 0; c < 32; c++) ck_assert_double_eq_tol(o[c], V[c], 1e-15);
}
END_TEST

START_TEST(test_reference_vs_naive) {
  Problem cases[] = {tiny_d1(), tiny_p1(),
                     mk(PROB_D1, "d_model", 32L, "heads", 1L, "d_ff", 32L, "layers", 1L,
                        "history", 0L, "steps", 5L, NULL),
                     mk(PROB_P1, "d_model", 96L, "heads", 3L, "d_ff", 160L, "layers", 1L,
                        "seqs", 3L, "rows", 64L, NULL)};
  for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
    double e = naive_vs_reference(&cases[i], 23);
    /* float rounding of values of magnitude < 8 is <= 2^-21 */
    ck_assert_msg(e < 1e-6, "case %u: %g", i, e);
  }
}
END_TEST

START_TEST(test_reference_default_d1) {
  Problem p;
  wl_problem_default(&p, PROB_D1);
  ck_assert_double_lt(naive_vs_reference(&p, 7), 1e-6);
}
END_TEST

/* ---------------------------------------------------------------- check */

/* A problem's HBM after a perfect program run: inputs released, reference
 * outputs written. */
static float *perfect(const Problem *p, const Abi *abi, uint64_t seed) {
  float *h = mk_hbm(p, abi, seed);
  for (int t = 0; p->kind == PROB_D1 && t < p->steps; t++) wl_release_input(p, abi, seed, t, h);
  wl_write_reference(p, abi, seed, h);
  return h;
}

static float *at(float *hbm, const Abi *abi, const char *sym, size_t e) {
  return (float *)symf(hbm, abi, sym) + e;
}

START_TEST(test_check_defaults_pass) {
  for (int k = 0; k < 2; k++) {
    Problem p;
    Abi abi;
    wl_problem_default(&p, k == 0 ? PROB_D1 : PROB_P1);
    wl_abi_build(&p, &abi);
    g_autofree float *h = perfect(&p, &abi, 7);
    long nbad = 0;
    for (int i = 0; i < abi.n; i++) /* every output finite (D1 caches: all rows) */
      if (abi.syms[i].kind == ABI_OUTPUT || abi.syms[i].kind == ABI_CACHE)
        for (uint64_t e = 0; e < abi.syms[i].bytes / 4; e++)
          EXPECT(isfinite(h[abi.syms[i].addr / 4 + e]));
    ck_assert_int_eq(nbad, 0);
    WlCheck c;
    wl_check(&p, &abi, 7, h, &c);
    ck_assert(c.pass);
    ck_assert_int_eq(c.unwritten, 0);
    ck_assert_double_lt(c.max_abs_err, 1e-6); /* only the rounding to float */
    long want = k == 0 ? 8L * 128 + 2L * 2 * 4 * 8 * 32 : 512L * 256 + 2L * 2 * 2 * 8 * 256 * 32;
    ck_assert_int_eq(c.checked, want);
    /* the image of another seed does not pass */
    WlCheck c2;
    wl_check(&p, &abi, 13, h, &c2);
    ck_assert(!c2.pass);
    ck_assert_double_gt(c2.max_abs_err, 0.1);
    wl_abi_clear(&abi);
  }
}
END_TEST

START_TEST(test_check_detects) {
  struct {
    int d1;
    const char *sym;
    size_t e;
    const char *worst;
  } cases[] = {
      {1, "out", 1 * 64 + 17, "out[1][17]"},
      {1, "k_cache.l1", ((size_t)1 * 35 + 33) * 32 + 5, "k_cache.l1[h1][pos33][5]"},
      {1, "v_cache.l0", ((size_t)0 * 35 + 34) * 32 + 31, "v_cache.l0[h0][pos34][31]"},
      {0, "out", 40 * 64 + 3, "out[40][3]"},
      {0, "k_out.l0", (((size_t)1 * 2 + 1) * 32 + 17) * 32 + 5, "k_out.l0[s1][h1][r17][5]"},
      {0, "v_out.l1", 0, "v_out.l1[s0][h0][r0][0]"},
  };
  for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
    Problem p = cases[i].d1 ? tiny_d1() : tiny_p1();
    Abi abi;
    wl_abi_build(&p, &abi);
    g_autofree float *h = perfect(&p, &abi, 11);
    WlCheck c;
    float *v = at(h, &abi, cases[i].sym, cases[i].e), keep = *v;
    *v += 1e-3f;
    wl_check(&p, &abi, 11, h, &c);
    ck_assert(!c.pass);
    ck_assert_int_eq(c.unwritten, 0);
    ck_assert_double_eq_tol(c.max_abs_err, 1e-3, 1e-5);
    ck_assert_str_eq(c.worst, cases[i].worst);
    *v = keep + (float)(1.1 * WL_TOLERANCE); /* just outside the tolerance */
    wl_check(&p, &abi, 11, h, &c);
    ck_assert(!c.pass);
    ck_assert_str_eq(c.worst, cases[i].worst);
    *v = keep + (float)(0.9 * WL_TOLERANCE); /* just inside */
    wl_check(&p, &abi, 11, h, &c);
    ck_assert(c.pass);
    ck_assert_str_eq(c.worst, cases[i].worst);
    *v = NAN; /* left unwritten */
    wl_check(&p, &abi, 11, h, &c);
    ck_assert(!c.pass);
    ck_assert_int_eq(c.unwritten, 1);
    ck_assert(isinf(c.max_abs_err));
    ck_assert_str_eq(c.worst, cases[i].worst);
    *v = INFINITY;
    wl_check(&p, &abi, 11, h, &c);
    ck_assert(!c.pass && isinf(c.max_abs_err) && c.unwritten == 0);
    *v = keep;
    wl_check(&p, &abi, 11, h, &c);
    ck_assert(c.pass);
    wl_abi_clear(&abi);
  }
}
END_TEST

START_TEST(test_check_scope) {
  Problem p = tiny_d1();
  Abi abi;
  wl_abi_build(&p, &abi);
  g_autofree float *h = perfect(&p, &abi, 7);
  /* history rows, x_in and scratch are not checked */
  *at(h, &abi, "k_cache.l0", 5) = 99.0f;
  *at(h, &abi, "x_in", 3) = NAN;
  *at(h, &abi, "scratch", 0) = NAN;
  WlCheck c;
  wl_check(&p, &abi, 7, h, &c);
  ck_assert(c.pass);
  /* an untouched image: everything unwritten, the first value named */
  g_autofree float *fresh = mk_hbm(&p, &abi, 7);
  wl_check(&p, &abi, 7, fresh, &c);
  ck_assert(!c.pass);
  ck_assert_int_eq(c.unwritten, c.checked);
  ck_assert_int_eq(c.checked, 3L * 64 + 2L * 2 * 2 * 3 * 32);
  ck_assert_str_eq(c.worst, "out[0][0]");
  wl_abi_clear(&abi);
}
END_TEST

/* wl_check settles a run with a NaN or infinite output without the
 * reference: the same result as the full comparison -- infinite error, the
 * first non-finite value as `worst` (even after a larger finite error), every
 * value counted. */
START_TEST(test_check_cheap_first) {
  for (int k = 0; k < 2; k++) {
    Problem p = k ? tiny_p1() : tiny_d1();
    Abi abi;
    wl_abi_build(&p, &abi);
    g_autofree float *h = perfect(&p, &abi, 13);
    WlCheck full;
    wl_check(&p, &abi, 13, h, &full);
    *at(h, &abi, "out", 5) += 1000.0f;             /* a large finite error first */
    const char *sym = k ? "k_out.l1" : "v_cache.l1"; /* then -inf, NaN, +inf */
    size_t e0 = k ? 40 : ((size_t)1 * 35 + 32) * 32 + 7;
    *at(h, &abi, sym, e0) = -INFINITY;
    *at(h, &abi, sym, e0 + 1) = NAN;
    *at(h, &abi, sym, e0 + 2) = INFINITY;
    WlCheck c;
    wl_check(&p, &abi, 13, h, &c);
    ck_assert(!c.pass);
    ck_assert(isinf(c.max_abs_err));
    ck_assert_str_eq(c.worst, k ? "k_out.l1[s0][h0][r1][8]" : "v_cache.l1[h1][pos32][7]");
    ck_assert_int_eq(c.unwritten, 1);
    ck_assert_int_eq(c.checked, full.checked);
    wl_abi_clear(&abi);
  }
}
END_TEST

/* The reference is deterministic, and the same with any seed-independent
 * inputs order: two runs give identical bytes. */
START_TEST(test_reference_deterministic) {
  Problem p = tiny_p1();
  Abi abi;
  wl_abi_build(&p, &abi);
  g_autofree float *a = perfect(&p, &abi, 23);
  g_autofree float *b = perfect(&p, &abi, 23);
  ck_assert(memcmp(a, b, abi.hbm_bytes) == 0);
  wl_abi_clear(&abi);
}
END_TEST

/* ------------------------------------------ bug classes (spec v2, issue 7) */

/* The tolerance is chosen to reject these bugs (docs/workloads.md section 6).
 * Measured max_abs_err / WL_TOLERANCE of each deviating model
 * (wl_write_deviant) at WL_TOLERANCE = 1e-4 and the default dims, seeds
 * 7, 13, 11, 23:
 *
 *   deviation               D1                        P1
 *   GELU with erf           1.86  1.93  1.83  2.09    2.73  2.64  2.75  3.04
 *   LN eps 1e-3             36.0  35.8  33.1  30.6    46.2  43.4  41.5  40.8
 *   scale 1/sqrt(33)        9.69  9.26  9.09  7.90    46.6  45.6  47.6  43.4
 *   bo dropped              2314  2404  2279  2658    3095  3273  3707  3014
 *   b2 dropped              2212  1892  2146  2135    2599  2445  2216  2938
 *   mask sees next row      --                        11218 11504 9855  12842
 *   mask misses own row     146   123   130   170     16120 17235 13489 17315
 *   (none: the reference)   7.5e-4 5.9e-4 6.0e-4 6.6e-4  1.2e-3 (x4), rounding only
 *
 * Each must fail on every seed with at least `floor` times the tolerance,
 * so that a looser tolerance is caught before it lets the bug through.
 * The floor is 2 but for D1's GELU-erf, whose margin at 1e-4 is only
 * 1.83..2.09: it is 1.5 there (a tolerance above ~1.2e-4 trips it). */
static const struct {
  WlDeviation dev;
  double floor_d1, floor_p1;
} bug_classes[] = {
    {WL_DEV_GELU_ERF, 1.5, 2.0},  {WL_DEV_LN_EPS_1E3, 2.0, 2.0},
    {WL_DEV_SCALE_33, 2.0, 2.0},  {WL_DEV_DROP_BO, 2.0, 2.0},
    {WL_DEV_DROP_B2, 2.0, 2.0},   {WL_DEV_MASK_NEXT, 0, 2.0},
    {WL_DEV_MASK_SELF, 2.0, 2.0},
};

static const uint64_t grading_seeds[] = {7, 13, 11, 23};

/* wl_check of the image a program with bug `dev` would leave (its outputs
 * written exactly where a program writes them) for a seed. */
static WlCheck check_deviant(const Problem *p, const Abi *abi, uint64_t seed, WlDeviation dev) {
  g_autofree float *h = mk_hbm(p, abi, seed);
  for (int t = 0; p->kind == PROB_D1 && t < p->steps; t++) wl_release_input(p, abi, seed, t, h);
  wl_write_deviant(p, abi, seed, dev, h);
  WlCheck c;
  wl_check(p, abi, seed, h, &c);
  return c;
}

START_TEST(test_deviation_table) {
  Problem d, p;
  wl_problem_default(&d, PROB_D1);
  wl_problem_default(&p, PROB_P1);
  ck_assert_str_eq(wl_deviation_name(WL_DEV_NONE), "none");
  ck_assert_str_eq(wl_deviation_name(WL_DEV_GELU_ERF), "gelu-erf");
  ck_assert_str_eq(wl_deviation_name(WL_DEV_MASK_SELF), "mask-self");
  ck_assert_str_eq(wl_deviation_name(WL_DEV_COUNT), "?");
  for (int k = 0; k < WL_DEV_COUNT; k++) {
    ck_assert(strcmp(wl_deviation_name((WlDeviation)k), "?") != 0);
    ck_assert(wl_deviation_applies(&p, (WlDeviation)k));
    ck_assert(wl_deviation_applies(&d, (WlDeviation)k) == (k != WL_DEV_MASK_NEXT));
  }
  ck_assert(!wl_deviation_applies(&p, WL_DEV_COUNT));
  /* wl_write_reference is the deviation none, byte for byte */
  Problem t = tiny_p1();
  Abi abi;
  wl_abi_build(&t, &abi);
  g_autofree float *a = mk_hbm(&t, &abi, 13);
  g_autofree float *b = g_memdup2(a, abi.hbm_bytes);
  wl_write_reference(&t, &abi, 13, a);
  wl_write_deviant(&t, &abi, 13, WL_DEV_NONE, b);
  ck_assert(memcmp(a, b, abi.hbm_bytes) == 0);
  /* P1's row 0 sees nothing when the mask misses its own row: its layer-0
   * attention output is 0, so out row 0 is still finite */
  wl_write_deviant(&t, &abi, 13, WL_DEV_MASK_SELF, b);
  for (int c = 0; c < t.d_model; c++) ck_assert(isfinite(symf(b, &abi, "out")[c]));
  wl_abi_clear(&abi);
}
END_TEST

/* Sanity of the harness: the unbugged model, written the same way, passes
 * on every grading seed (rounding to float only). */
START_TEST(test_check_deviation_none_passes) {
  for (int k = 0; k < 2; k++) {
    Problem p;
    Abi abi;
    wl_problem_default(&p, k ? PROB_P1 : PROB_D1);
    wl_abi_build(&p, &abi);
    for (unsigned s = 0; s < G_N_ELEMENTS(grading_seeds); s++) {
      WlCheck c = check_deviant(&p, &abi, grading_seeds[s], WL_DEV_NONE);
      ck_assert_msg(c.pass && c.unwritten == 0 && c.max_abs_err < 1e-6,
                    "%s seed %" G_GUINT64_FORMAT ": %g at %s", wl_problem_name(p.kind),
                    grading_seeds[s], c.max_abs_err, c.worst);
    }
    wl_abi_clear(&abi);
  }
}
END_TEST

/* Loop index i: bug class i / 2 on D1 (i even) or P1 (i odd), at the
 * default dims, on all four grading seeds. */
START_TEST(test_check_rejects_bug_class) {
  WlDeviation dev = bug_classes[_i / 2].dev;
  Problem p;
  Abi abi;
  wl_problem_default(&p, _i % 2 ? PROB_P1 : PROB_D1);
  double floor = _i % 2 ? bug_classes[_i / 2].floor_p1 : bug_classes[_i / 2].floor_d1;
  if (!wl_deviation_applies(&p, dev)) return;
  wl_abi_build(&p, &abi);
  for (unsigned s = 0; s < G_N_ELEMENTS(grading_seeds); s++) {
    WlCheck c = check_deviant(&p, &abi, grading_seeds[s], dev);
    double ratio = c.max_abs_err / WL_TOLERANCE;
    ck_assert_msg(!c.pass && c.unwritten == 0 && isfinite(c.max_abs_err) && ratio >= floor,
                  "%s %s seed %" G_GUINT64_FORMAT ": max_abs_err %.3e = %.2f x tolerance "
                  "(pass %d, want a failure by >= %.1f x)",
                  wl_problem_name(p.kind), wl_deviation_name(dev), grading_seeds[s],
                  c.max_abs_err, ratio, c.pass, floor);
  }
  wl_abi_clear(&abi);
}
END_TEST

/* The documented limit: a LayerNorm epsilon below the spec's (1e-6; 1e-12
 * and 0 differ from it by < 1e-6) moves the outputs by only 0.28..0.42 x
 * the tolerance (D1 0.33 0.33 0.30 0.28, P1 0.42 0.39 0.38 0.37 on seeds
 * 7, 13, 11, 23), so it passes.  docs/workloads.md section 6 says so; this
 * pins the statement (and that the deviation does change the outputs). */
START_TEST(test_check_ln_eps_small_passes) {
  for (int k = 0; k < 2; k++) {
    Problem p;
    Abi abi;
    wl_problem_default(&p, k ? PROB_P1 : PROB_D1);
    wl_abi_build(&p, &abi);
    for (unsigned s = 0; s < G_N_ELEMENTS(grading_seeds); s++) {
      WlCheck c = check_deviant(&p, &abi, grading_seeds[s], WL_DEV_LN_EPS_1E6);
      double ratio = c.max_abs_err / WL_TOLERANCE;
      ck_assert_msg(c.pass && ratio > 0.2 && ratio < 0.5, "%s seed %" G_GUINT64_FORMAT ": %.2f",
                    wl_problem_name(p.kind), grading_seeds[s], ratio);
    }
    wl_abi_clear(&abi);
  }
}
END_TEST

Suite *suite_workload(void) {
  Suite *s = suite_create("workload");
  TCase *tc = tcase_create("problem");
  tcase_add_test(tc, test_problem_defaults);
  tcase_add_test(tc, test_problem_set);
  tcase_add_test(tc, test_problem_errors);
  tcase_add_test(tc, test_problem_validate);
  suite_add_tcase(s, tc);
  tc = tcase_create("abi");
  tcase_add_test(tc, test_abi_layouts);
  tcase_add_test(tc, test_abi_frozen);
  suite_add_tcase(s, tc);
  tc = tcase_create("data");
  tcase_add_test(tc, test_data_formula);
  tcase_add_test(tc, test_data_ranges_and_seeds);
  tcase_add_test(tc, test_init_d1);
  tcase_add_test(tc, test_init_p1);
  tcase_add_test(tc, test_release_one_row);
  suite_add_tcase(s, tc);
  tc = tcase_create("reference");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_naive_helpers);
  tcase_add_test(tc, test_reference_vs_naive);
  tcase_add_test(tc, test_reference_default_d1);
  tcase_add_test(tc, test_reference_deterministic);
  suite_add_tcase(s, tc);
  tc = tcase_create("check");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_check_defaults_pass);
  tcase_add_test(tc, test_check_detects);
  tcase_add_test(tc, test_check_scope);
  tcase_add_test(tc, test_check_cheap_first);
  suite_add_tcase(s, tc);
  tc = tcase_create("bug-classes");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_deviation_table);
  tcase_add_test(tc, test_check_deviation_none_passes);
  tcase_add_loop_test(tc, test_check_rejects_bug_class, 0, 2 * (int)G_N_ELEMENTS(bug_classes));
  tcase_add_test(tc, test_check_ln_eps_small_passes);
  suite_add_tcase(s, tc);
  return s;
}
