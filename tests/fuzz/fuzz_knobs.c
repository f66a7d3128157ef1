/* fuzz_knobs.c - libFuzzer target: plans drawn from the knob table rather
 * than from text, so that many knobs meet in one plan that compiles (byte
 * mutations of YAML rarely get that far).  The input's bytes are choices:
 * the problem and small dims, a machine, then while the input lasts (at
 * most 24 times) a knob of the problem's section (plan_schema.c's table,
 * implemented values only) and its value (knob_value).  A knob that
 * needs another (plan_needs: "has no effect unless") gets it set too.  The
 * plan is written as YAML and goes through fuzz_section.h's section run,
 * with the numerics checked when the run ends within the cap: a plan is
 * refused with one diagnostic line, or its program runs and computes the
 * right values.
 * FUZZ_SHOW=1 in the environment prints each drawn plan on stderr (to read
 * a finding).  Replay outcome: fuzz_section.h's, of the one section.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_section.h"
#include "plan_internal.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fuzz_glib_fatal();
  return 0;
}

/* The input as a stream of choices; zeros once it is used up. */
typedef struct Bytes {
  const uint8_t *p;
  size_t n;
} Bytes;

static unsigned take(Bytes *b) {
  if (b->n == 0) return 0;
  b->n--;
  return *b->p++;
}
/* One of n (n >= 1). */
static int pick(Bytes *b, int n) { return (int)(take(b) % (unsigned)n); }
static int pick_of(Bytes *b, const int *v, int n) { return v[pick(b, n)]; }

/* The value to write for knob k: the default, the minimum, twice or half
 * the default, a multiple of 32 up to 256, a power of two up to 1024, or
 * one of a small range above the minimum. */
static long knob_value(Bytes *b, const PlanKnobDef *k) {
  if (k->type == KT_BOOL) return pick(b, 2);
  if (k->type == KT_ENUM) {
    int n = 0;
    while (k->names[n]) n++;
    return pick(b, n);
  }
  long lo = k->min, hi = k->max, d = k->def;
  long v;
  switch (pick(b, 7)) {
  case 0: v = d; break;
  case 1: v = lo; break;
  case 2: v = d * 2; break;
  case 3: v = d / 2; break;
  case 4: v = 32L * (1 + pick(b, 8)); break; /* the sizes that divide */
  case 5: v = 1L << pick(b, 11); break;
  default: { /* two bytes, low first (one per statement: see the plan's hardware) */
    long low = take(b), high = take(b);
    v = lo + (low | high << 8) % (MIN(hi - lo, 1024) + 1);
    break;
  }
  }
  return CLAMP(v, lo, hi);
}

/* The plan's knob values: -1 not written. */
typedef struct Draw {
  long v[PLAN_NKNOBS];
} Draw;

/* Every knob a written knob needs, written at its least value that has an
 * effect (to a fixed point: needs chain). */
static void add_needs(Draw *d, ProblemKind kind) {
  for (gboolean moved = TRUE; moved;) {
    moved = FALSE;
    for (int i = 0; i < plan_nneeds; i++) {
      const PlanNeed *n = &plan_needs[i];
      if (n->only && !(n->only & (1u << kind))) continue;
      int a = plan_knob_index(n->path), b = plan_knob_index(n->needs);
      if (a < 0 || b < 0 || d->v[a] < 0) continue;
      if (!(plan_knobs[b].applies & (1u << kind)) || plan_knobs[b].step[kind] != 0) continue;
      if ((d->v[b] >= 0 ? d->v[b] : plan_knobs[b].def) >= n->needs_min) continue;
      d->v[b] = n->needs_min;
      moved = TRUE;
    }
  }
}

/* The section's knobs as YAML: "group: {key: value, ...}" per dotted
 * group (a group's own scalar, `store_spacing`, as its `default`). */
static void write_knobs(GString *y, const Draw *d, ProblemKind kind) {
  gboolean done[PLAN_NKNOBS] = {FALSE};
  for (int i = 0; i < PLAN_NKNOBS; i++) {
    const PlanKnobDef *k = &plan_knobs[i];
    if (done[i] || d->v[i] < 0 || k->type == KT_DIM) continue;
    g_autofree char *val = plan_knob_value_text(k, d->v[i]);
    const char *dot = strchr(k->path, '.');
    size_t glen = dot ? (size_t)(dot - k->path) : strlen(k->path);
    /* the group: every written knob whose path is the group or starts with "group." */
    GString *items = g_string_new(NULL);
    int scalar = -1, members = 0;
    for (int j = i; j < PLAN_NKNOBS; j++) {
      const PlanKnobDef *m = &plan_knobs[j];
      if (d->v[j] < 0 || m->type == KT_DIM || strncmp(m->path, k->path, glen) != 0) continue;
      if (m->path[glen] == '\0') {
        scalar = j;
      } else if (m->path[glen] == '.') {
        g_autofree char *mv = plan_knob_value_text(m, d->v[j]);
        g_string_append_printf(items, "%s%s: %s", members++ ? ", " : "", m->path + glen + 1, mv);
      } else {
        continue;
      }
      done[j] = TRUE;
    }
    if (members == 0) {
      g_string_append_printf(y, "  %s: %s\n", k->path, val);
    } else {
      g_string_append_printf(y, "  %.*s: {", (int)glen, k->path);
      if (scalar >= 0) {
        g_autofree char *sv = plan_knob_value_text(&plan_knobs[scalar], d->v[scalar]);
        g_string_append_printf(y, "default: %s, ", sv);
      }
      g_string_append_printf(y, "%s}\n", items->str);
    }
    g_string_free(items, TRUE);
  }
  (void)kind;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Bytes b = {data, size};
  ProblemKind kind = pick(&b, 2) ? PROB_P1 : PROB_D1;
  static const int dm[] = {32, 64, 64, 128}, dff[] = {32, 64, 128, 256}, sms[] = {2, 4, 8, 16};
  static const int noc[] = {256, 512, 1024}, rf[] = {32, 64, 128};
  GString *y = g_string_new("version: 1\n");
  /* one choice per statement, in order: the order in which a call's
   * arguments are evaluated is unspecified (gcc and clang differ), and the
   * replay (gcc) must draw the plan the fuzzer (clang) drew */
  int hw[9];
  hw[0] = pick_of(&b, sms, 4);
  hw[1] = 2 + 2 * pick(&b, 2);
  hw[2] = pick_of(&b, rf, 3);
  hw[3] = 1 + pick(&b, 2);
  hw[4] = 1 + pick(&b, 2);
  hw[5] = 1 + pick(&b, 5);
  hw[6] = pick_of(&b, noc, 3);
  hw[7] = pick(&b, 2);
  hw[8] = pick(&b, 4);
  g_string_append_printf(y, "hardware: {sms: %d, wgs_per_sm: %d, rf_kib: %d, mma_arrays: %d, "
                            "dma: {engines: %d, depth: %d}, noc_bits: %d, reduce_units: %d, multicast: %s}\n",
                         hw[0], hw[1], hw[2], hw[3], hw[4], hw[5], hw[6], hw[7], hw[8] ? "true" : "false");
  int d = pick_of(&b, dm, 4);
  int f = pick_of(&b, dff, 4);
  int layers = 1 + pick(&b, 2);
  g_string_append_printf(y, "%s:\n  problem: {d_model: %d, heads: %d, d_ff: %d, layers: %d, ",
                         kind == PROB_P1 ? "p1" : "d1", d, d / 32, f, layers);
  int e1 = pick(&b, kind == PROB_D1 ? 5 : 2);
  int e2 = pick(&b, kind == PROB_D1 ? 4 : 3);
  if (kind == PROB_D1)
    g_string_append_printf(y, "history: %d, steps: %d}\n", 32 * e1, 1 + e2);
  else
    g_string_append_printf(y, "seqs: %d, rows: %d}\n", 1 + e1, 32 << e2);
  /* the knobs that may be written: of this problem, implemented */
  int can[PLAN_NKNOBS], ncan = 0;
  Draw dr;
  for (int i = 0; i < PLAN_NKNOBS; i++) {
    const PlanKnobDef *k = &plan_knobs[i];
    dr.v[i] = -1;
    if (k->type == KT_DIM || !(k->applies & (1u << kind)) || k->step[kind] != 0) continue;
    if (strcmp(k->path, "placement.time_limit_s") == 0) continue; /* section run: 1 s */
    can[ncan++] = i;
  }
  /* then (knob, value) choices while the input lasts, at most 24 */
  for (int n = 0; n < 24 && b.n > 0; n++) {
    int i = can[pick(&b, ncan)];
    dr.v[i] = knob_value(&b, &plan_knobs[i]);
  }
  add_needs(&dr, kind);
  write_knobs(y, &dr, kind);
  if (getenv("FUZZ_SHOW")) g_printerr("%s", y->str);
  GError *err = NULL;
  Plan *plan = plan_parse(FILE_NAME, y->str, y->len, &err);
  if (!plan) {
    check_diagnostic(err);
    fuzz_outcome(err->message);
    g_error_free(err);
  } else {
    GString *out = g_string_new(NULL);
    compile(plan, kind, TRUE, out);
    fuzz_outcome(out->str);
    g_string_free(out, TRUE);
    plan_free(plan);
  }
  g_string_free(y, TRUE);
  return 0;
}
