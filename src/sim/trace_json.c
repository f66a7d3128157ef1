/* trace_json.c - the Chrome trace-event JSON of a run (`tcc-sim --trace`,
 * docs/tools.md "Trace"), which Perfetto and chrome://tracing open.
 *
 *   pid 1 "WGs"           a track per WG (more lanes where its instructions
 *                         overlap): one slice per instruction, or per task;
 *                         flow arrows from each SIG (or RED) to the WAITs
 *                         it released
 *   pid 2 "MMA arrays"    a track per array: one slice per MMA
 *   pid 3 "DMA engines"   a track per engine: its request port, per descriptor
 *   pid 4 "HBM channels"  a counter per channel: busy %, per bucket
 *   pid 5 "NoC links"     a counter per SM in-link and out-link: busy %
 *   pid 6 "power"         counters: mW per bucket, and the 1000-cycle window
 *                         starting there; the hottest window as a slice and
 *                         a global instant
 *
 * Time: ts and dur count microseconds, as the format says, and a cycle is
 * 1 ns: cycles / 1000, as doubles (displayTimeUnit "ns").  Every object is
 * built and serialised by json-glib (recorded here, printed by the JSON
 * module: jdoc.h), one event per line (so that the file greps and diffs); only
 * the frame around the event array is literal text.  Events are written
 * as they are made, so memory does not grow with the file. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "jdoc.h"
#include "outfile.h"
#include "trace.h"
#include "text_escape.h"

enum { PID_WG = 1, PID_MMA, PID_DMA, PID_HBM, PID_NOC, PID_POWER };
enum { WG_LANES = 1000 }; /* tid = wg * WG_LANES + lane */

/* Where the JSON goes: a file or a string. */
typedef struct Out {
  FILE *f;
  GString *g;
  JDoc *b;
  gboolean first;
} Out;

static void put(Out *o, const char *s) {
  if (o->f)
    fputs(s, o->f);
  else
    g_string_append(o->g, s);
}

/* Serialise the builder's object as one line of the event array. */
static void emit(Out *o) {
  g_autofree char *text = jdoc_compact_text(o->b, NULL); /* trace_json/write loaded the module */
  put(o, o->first ? "\n" : ",\n");
  put(o, text ? text : "null");
  o->first = FALSE;
  jdoc_reset(o->b);
}

/* JSON text is UTF-8: a byte that is not (a comment may hold any) becomes
 * U+FFFD, so the file stays JSON whatever the program's source holds. */
static void mem_str(JDoc *b, const char *k, const char *v) {
  jdoc_member(b, k);
  if (g_utf8_validate(v, -1, NULL)) {
    jdoc_string(b, v);
    return;
  }
  g_autofree char *valid = g_utf8_make_valid(v, -1);
  jdoc_string(b, valid);
}

static void mem_int(JDoc *b, const char *k, int64_t v) {
  jdoc_member(b, k);
  jdoc_int(b, v);
}

/* A time of the file (ts, dur): `cycles` in microseconds (1 cycle = 1 ns),
 * a double; printed in the fewest digits that read back as it (json_num.h),
 * so 123 cycles are 0.123. */
static void mem_time(JDoc *b, const char *k, int64_t cycles) {
  jdoc_member(b, k);
  jdoc_double(b, (double)cycles / 1000.0);
}

/* The dur of a slice [t0, t1) (cycles): the double the viewers add to ts to
 * find its end (speedscope and chrome://tracing add them as doubles) that
 * gives exactly the end's ts, (t1 - t0) / 1000 when that does (most
 * slices), else the nearest double that does, or that falls just short of
 * it where none does (the sum 0.931 + 0.064 is 0.9950000000000001, past a
 * slice that starts at 0.995: the viewers would nest the two).  Perfetto
 * rounds each to whole nanoseconds: t1 - t0. */
static void mem_dur(JDoc *b, int64_t t0, int64_t t1) {
  double a = (double)t0 / 1000.0, e = (double)t1 / 1000.0, d = (double)(t1 - t0) / 1000.0;
  if (a + d != e) {
    d = e - a; /* exact when a >= e / 2 (Sterbenz), else within an ulp or two */
    for (int i = 0; i < 64 && a + d != e; i++) d = nextafter(d, a + d < e ? INFINITY : -INFINITY);
    /* when no double gives e (a + d a tie between e and a neighbour, rounded
     * to the even one), the end falls just before e: never after it */
    while (a + d > e) d = nextafter(d, -INFINITY);
  }
  jdoc_member(b, "dur");
  jdoc_double(b, d);
}

/* Begin an event: name, phase, pid, tid, ts (cycles). */
static void ev_begin(Out *o, const char *name, const char *ph, int pid, int64_t tid, int64_t ts) {
  jdoc_begin_object(o->b);
  mem_str(o->b, "name", name);
  mem_str(o->b, "ph", ph);
  mem_int(o->b, "pid", pid);
  mem_int(o->b, "tid", tid);
  mem_time(o->b, "ts", ts);
}

/* Process or thread name and sort order (metadata events). */
static void meta(Out *o, const char *what, int pid, int64_t tid, const char *name, int64_t sort) {
  ev_begin(o, what, "M", pid, tid, 0);
  jdoc_member(o->b, "args");
  jdoc_begin_object(o->b);
  mem_str(o->b, "name", name);
  jdoc_end_object(o->b);
  jdoc_end_object(o->b);
  emit(o);
  ev_begin(o, strcmp(what, "process_name") == 0 ? "process_sort_index" : "thread_sort_index", "M", pid,
           tid, 0);
  jdoc_member(o->b, "args");
  jdoc_begin_object(o->b);
  mem_int(o->b, "sort_index", sort);
  jdoc_end_object(o->b);
  jdoc_end_object(o->b);
  emit(o);
}

/* One counter point: name, pid, ts, one series. */
static void counter(Out *o, const char *name, int pid, int64_t ts, const char *series, int64_t v) {
  ev_begin(o, name, "C", pid, 0, ts);
  jdoc_member(o->b, "args");
  jdoc_begin_object(o->b);
  mem_int(o->b, series, v);
  jdoc_end_object(o->b);
  jdoc_end_object(o->b);
  emit(o);
}

/* ---- WG tracks ------------------------------------------------------- */

/* The `; KNOB TASK` comment of an instruction's source line (either may be
 * empty). */
static void knob_task(const char *text, char knob[128], char task[128]) {
  knob[0] = task[0] = '\0';
  const char *c = strchr(text, ';');
  if (!c) return;
  g_auto(GStrv) w = g_strsplit_set(c + 1, " \t", -1);
  int k = 0;
  for (int i = 0; w[i]; i++) {
    if (!*w[i]) continue;
    g_strlcpy(k == 0 ? knob : task, w[i], 128);
    if (++k == 2) break;
  }
}

static const char *mnemonic(const Insn *in) {
  return in->op == OP_LD && (in->mods & MOD_MC) ? "LD.mc" : sim_op_mnemonic[in->op];
}

/* The span an instruction shows: a WAIT from when the WG could first try it
 * (one cycle after the previous issue) to its issue; a WAITT its cycles;
 * the rest from issue to completion. */
static void span(const SimTrace *t, const Insn *in, int k, int pc, int64_t *t0, int64_t *t1) {
  int64_t is = t->issue[k];
  if (in->op == OP_WAIT) {
    *t0 = pc > 0 && t->issue[k - 1] >= 0 ? MIN(t->issue[k - 1] + 1, is) : is;
    *t1 = is + 1;
  } else if (in->op == OP_WAITT) {
    *t0 = is;
    *t1 = is + MAX(in->n, 1);
  } else {
    *t0 = is;
    *t1 = MAX(t->done[k], is + 1);
  }
}

/* A group of consecutive instructions of one WG shown as one slice. */
typedef struct Group {
  int pc0, pc1;        /* [pc0, pc1) */
  int64_t t0, t1;
} Group;

/* The lane (tid) of a slice starting at t0: the first whose last slice has
 * ended, so slices in a lane never overlap (the viewers need nesting). */
static int64_t lane(GArray *ends, int wg, int64_t t0, int64_t t1, Out *o) {
  guint l = 0;
  while (l < ends->len && g_array_index(ends, int64_t, l) > t0) l++;
  if (l == ends->len) {
    g_array_append_val(ends, t1);
    g_autofree char *name = l == 0 ? g_strdup_printf("wg%d", wg) : g_strdup_printf("wg%d #%u", wg, l + 1);
    meta(o, "thread_name", PID_WG, (int64_t)wg * WG_LANES + l, name, (int64_t)wg * WG_LANES + l);
  }
  g_array_index(ends, int64_t, l) = t1;
  return (int64_t)wg * WG_LANES + l;
}

/* One slice of a WG: an instruction, or a group (one task when `one_task`,
 * else a run of instructions whose first task names it); its tid. */
static int64_t wg_slice(Out *o, const Program *p, const SimTrace *t, int wg, const Group *g, gboolean one_task,
                        GArray *ends) {
  const WgCode *c = &p->wgs[wg];
  const Insn *in = &c->insns[g->pc0], *last = &c->insns[g->pc1 - 1];
  const char *text = sim_insn_text(p, in);
  char knob[128], task[128];
  knob_task(text, knob, task);
  SimEnergySum e = 0;
  for (int pc = g->pc0; pc < g->pc1; pc++) e += t->energy[t->insn_base[wg] + pc];
  int n = g->pc1 - g->pc0;
  g_autofree char *name = n == 1     ? g_strdup_printf("%s%s%s", mnemonic(in), *task ? " " : "", task)
                         : one_task ? g_strdup_printf("%s (%d instructions)", *task ? task : mnemonic(in), n)
                                    : g_strdup_printf("%d instructions from %s", n, *task ? task : mnemonic(in));
  int64_t tid = lane(ends, wg, g->t0, g->t1, o);
  ev_begin(o, name, "X", PID_WG, tid, g->t0);
  mem_dur(o->b, g->t0, g->t1);
  mem_str(o->b, "cat", n == 1 ? "insn" : "insns");
  jdoc_member(o->b, "args");
  jdoc_begin_object(o->b);
  mem_int(o->b, "line", in->line);
  if (n == 1) {
    int k = t->insn_base[wg] + g->pc0;
    mem_str(o->b, "text", text);
    mem_int(o->b, "issue", t->issue[k]);
    if (t->start[k] >= 0) mem_int(o->b, "start", t->start[k]);
    mem_int(o->b, "done", t->done[k]);
  } else {
    mem_int(o->b, "last_line", last->line);
    mem_int(o->b, "instructions", n);
  }
  if (*knob) mem_str(o->b, n == 1 || one_task ? "knob" : "first_knob", knob);
  if (*task) mem_str(o->b, n == 1 || one_task ? "task" : "first_task", task);
  mem_int(o->b, "energy_pj", (int64_t)((e + EU_PER_PJ / 2) / EU_PER_PJ)); /* to the nearest pJ, halves up */
  jdoc_end_object(o->b);
  jdoc_end_object(o->b);
  emit(o);
  return tid;
}

/* The groups of WG wg at a level: 0 one per instruction, 1 runs of the same
 * source comment (task), 2 runs of `chunk` instructions. */
static GArray *groups(const Program *p, const SimTrace *t, int wg, int level, int chunk) {
  GArray *gs = g_array_new(FALSE, FALSE, sizeof(Group));
  const WgCode *c = &p->wgs[wg];
  Group g = {0, 0, 0, 0};
  const char *prev = ""; /* the group's comment (texts live in the Program) */
  for (int pc = 0; pc < c->n; pc++) {
    int k = t->insn_base[wg] + pc;
    if (t->issue[k] < 0) break; /* never issued (cannot happen after a good run) */
    int64_t t0, t1;
    span(t, &c->insns[pc], k, pc, &t0, &t1);
    const char *text = sim_insn_text(p, &c->insns[pc]);
    const char *cm = strchr(text, ';');
    gboolean same = g.pc1 > g.pc0 && (level == 1 ? strcmp(prev, cm ? cm : "") == 0
                                      : level == 2 ? g.pc1 - g.pc0 < chunk : FALSE);
    if (!same) {
      if (g.pc1 > g.pc0) g_array_append_val(gs, g);
      g.pc0 = pc;
      g.t0 = t0;
      g.t1 = t1;
      prev = cm ? cm : "";
    }
    g.pc1 = pc + 1;
    g.t1 = MAX(g.t1, t1);
  }
  if (g.pc1 > g.pc0) g_array_append_val(gs, g);
  return gs;
}

static int64_t count_groups(const Program *p, const SimTrace *t, int level, int chunk) {
  int64_t n = 0;
  for (int w = 0; w < p->nwgs; w++) {
    GArray *gs = groups(p, t, w, level, chunk);
    n += gs->len;
    g_array_free(gs, TRUE);
  }
  return n;
}

/* How the WG tracks show the instructions: the level of groups() and its
 * chunk, the instructions and the slices. */
typedef struct WgPlan {
  int level, chunk;
  int64_t insns, slices;
} WgPlan;

static WgPlan wg_plan(const Program *p, const SimTrace *t, const TraceLimits *lim) {
  WgPlan w = {0, 1, count_groups(p, t, 0, 1), 0};
  w.slices = w.insns;
  if (w.slices > lim->max_insn_slices) {
    w.level = 1;
    w.slices = count_groups(p, t, 1, 1);
  }
  if (w.slices > lim->max_insn_slices) {
    w.level = 2;
    w.chunk = (int)((w.insns + lim->max_insn_slices - 1) / lim->max_insn_slices);
    /* at worst one slice per WG (a chunk as long as every instruction) */
    while ((w.slices = count_groups(p, t, 2, w.chunk)) > lim->max_insn_slices && w.chunk < w.insns)
      w.chunk *= 2;
  }
  return w;
}

static char *wg_plan_text(const WgPlan *w, const TraceLimits *lim) {
  if (w->level == 0) return g_strdup_printf("one slice per instruction (%" G_GINT64_FORMAT ")", w->insns);
  if (w->level == 1)
    return g_strdup_printf("%" G_GINT64_FORMAT " instructions aggregated into %" G_GINT64_FORMAT
                           " slices, one per run of a WG's instructions with the same task (limit %d)",
                           w->insns, w->slices, lim->max_insn_slices);
  return g_strdup_printf("%" G_GINT64_FORMAT " instructions aggregated into %" G_GINT64_FORMAT
                         " slices of up to %d consecutive instructions of a WG (limit %d)",
                         w->insns, w->slices, w->chunk, lim->max_insn_slices);
}

/* The WG tracks; the tid of each slice (in their order: WG by WG, in
 * groups() order) into slice_tid. */
static void wg_tracks(Out *o, const Program *p, const SimTrace *t, const WgPlan *w, int64_t *slice_tid) {
  meta(o, "process_name", PID_WG, 0, "WGs", PID_WG);
  int64_t n = 0;
  for (int wg = 0; wg < p->nwgs; wg++) {
    GArray *gs = groups(p, t, wg, w->level, w->chunk);
    GArray *ends = g_array_new(FALSE, FALSE, sizeof(int64_t));
    for (guint i = 0; i < gs->len; i++)
      slice_tid[n++] = wg_slice(o, p, t, wg, &g_array_index(gs, Group, i), w->level < 2, ends);
    g_array_free(ends, TRUE);
    g_array_free(gs, TRUE);
  }
}

/* ---- flows: SIG -> WAIT ------------------------------------------------- */

/* Per instruction (global index), the slice of the WG tracks that shows it
 * (slices numbered as wg_tracks writes them; -1: none). */
static int *slice_of_insns(const Program *p, const SimTrace *t, const WgPlan *w) {
  int *of = g_new(int, MAX(t->insn_base[p->nwgs], 1));
  for (int k = 0; k < t->insn_base[p->nwgs]; k++) of[k] = -1;
  int n = 0;
  for (int wg = 0; wg < p->nwgs; wg++) {
    GArray *gs = groups(p, t, wg, w->level, w->chunk);
    for (guint i = 0; i < gs->len; i++, n++) {
      const Group *g = &g_array_index(gs, Group, i);
      for (int pc = g->pc0; pc < g->pc1; pc++) of[t->insn_base[wg] + pc] = n;
    }
    g_array_free(gs, TRUE);
  }
  return of;
}

/* A flow to draw: its recorded order, slices and the WAIT's stall. */
typedef struct Arrow {
  const TraceFlow *f;
  guint order;
  int from, to;       /* slices */
  int64_t stall;      /* cycles of the WAIT's span */
} Arrow;

/* The arrows drawn: one per WAIT released by a SIG or RED whose two ends
 * are in different slices, one per pair of slices, at most max_flows (those
 * of the longest WAITs); in recorded order. */
typedef struct FlowPlan {
  GArray *arrows;     /* Arrow */
  int64_t released;   /* WAITs released by a SIG or RED */
  int64_t inside;     /* both ends in one (aggregated) slice */
  int64_t repeated;   /* the same two slices as an earlier arrow */
  int64_t over;       /* past max_flows */
} FlowPlan;

static int by_stall(gconstpointer a, gconstpointer b) {
  const Arrow *x = a, *y = b;
  if (x->stall != y->stall) return x->stall > y->stall ? -1 : 1;
  return (x->order > y->order) - (x->order < y->order);
}

static int by_order(gconstpointer a, gconstpointer b) {
  const Arrow *x = a, *y = b;
  return (x->order > y->order) - (x->order < y->order);
}

static FlowPlan flow_plan(const Program *p, const SimTrace *t, const int *slice_of, const TraceLimits *lim) {
  FlowPlan fp = {g_array_new(FALSE, FALSE, sizeof(Arrow)), 0, 0, 0, 0};
  g_autoptr(GHashTable) seen = g_hash_table_new(g_int64_hash, g_int64_equal);
  gint64 *keys = g_new(gint64, MAX(t->flows->len, 1));
  for (guint i = 0; i < t->flows->len; i++) {
    const TraceFlow *f = &g_array_index(t->flows, TraceFlow, i);
    int ks = t->insn_base[f->src_wg] + f->src_pc, kd = t->insn_base[f->dst_wg] + f->dst_pc;
    if (t->issue[ks] < 0 || t->issue[kd] < 0 || slice_of[ks] < 0 || slice_of[kd] < 0) continue;
    fp.released++;
    if (slice_of[ks] == slice_of[kd]) {
      fp.inside++;
      continue;
    }
    keys[i] = (gint64)slice_of[ks] * G_MAXINT32 + slice_of[kd];
    if (g_hash_table_contains(seen, &keys[i])) {
      fp.repeated++;
      continue;
    }
    g_hash_table_add(seen, &keys[i]);
    int64_t t0, t1;
    span(t, &p->wgs[f->dst_wg].insns[f->dst_pc], kd, f->dst_pc, &t0, &t1);
    Arrow a = {f, i, slice_of[ks], slice_of[kd], t1 - t0};
    g_array_append_val(fp.arrows, a);
  }
  g_free(keys);
  if (fp.arrows->len > (guint)lim->max_flows) {
    g_array_sort(fp.arrows, by_stall);
    fp.over = fp.arrows->len - lim->max_flows;
    g_array_set_size(fp.arrows, (guint)lim->max_flows);
    g_array_sort(fp.arrows, by_order);
  }
  return fp;
}

static char *flow_plan_text(const FlowPlan *fp, const TraceLimits *lim) {
  if (fp->released == 0) return g_strdup("no WAIT released by a SIG or RED: no arrows");
  GString *g = g_string_new(NULL);
  g_string_append_printf(g, "%u arrow%s from a SIG or RED to the WAIT it released (of %" G_GINT64_FORMAT
                         " such WAITs", fp->arrows->len, fp->arrows->len == 1 ? "" : "s", fp->released);
  if (fp->inside) g_string_append_printf(g, "; %" G_GINT64_FORMAT " inside one aggregated slice", fp->inside);
  if (fp->repeated) g_string_append_printf(g, "; %" G_GINT64_FORMAT " between the same two slices as another",
                                           fp->repeated);
  if (fp->over)
    g_string_append_printf(g, "; %" G_GINT64_FORMAT " of the shortest WAITs past the limit of %d", fp->over,
                           lim->max_flows);
  g_string_append(g, ")");
  return g_string_free(g, FALSE);
}

/* One end of an arrow: a flow event at cycle ts on the slice's track, which
 * the viewers bind to the slice that encloses ts there ("s": its start,
 * "f" with "bp":"e": its end). */
static void flow_end(Out *o, const char *name, const char *ph, int64_t tid, int64_t ts, guint id) {
  ev_begin(o, name, ph, PID_WG, tid, ts);
  mem_str(o->b, "cat", "sync");
  mem_int(o->b, "id", id);
  if (ph[0] == 'f') mem_str(o->b, "bp", "e");
  jdoc_end_object(o->b);
  emit(o);
}

/* Each arrow from the issue of the SIG (or RED) to the issue of the WAIT,
 * both inside their slices (a WAIT's slice ends one cycle after its issue). */
static void flows(Out *o, const Program *p, const SimTrace *t, const FlowPlan *fp, const int64_t *slice_tid) {
  for (guint i = 0; i < fp->arrows->len; i++) {
    const Arrow *a = &g_array_index(fp->arrows, Arrow, i);
    const TraceFlow *f = a->f;
    g_autofree char *name = g_strconcat("ev.", (const char *)g_ptr_array_index(p->events, f->event), NULL);
    flow_end(o, name, "s", slice_tid[a->from], t->issue[t->insn_base[f->src_wg] + f->src_pc], i + 1);
    flow_end(o, name, "f", slice_tid[a->to], t->issue[t->insn_base[f->dst_wg] + f->dst_pc], i + 1);
  }
}

/* ---- MMA arrays and DMA engines --------------------------------------- */

static int by_track_time(gconstpointer a, gconstpointer b) {
  const TraceSlice *x = a, *y = b;
  if (x->track != y->track) return x->track < y->track ? -1 : 1;
  if (x->t0 != y->t0) return x->t0 < y->t0 ? -1 : 1;
  return x->wg != y->wg ? (x->wg < y->wg ? -1 : 1) : (x->pc > y->pc) - (x->pc < y->pc);
}

/* Slices left when slices of a track less than `gap` cycles apart merge. */
static int64_t merged_count(const GArray *s, int64_t gap) {
  int64_t n = 0;
  for (guint i = 0; i < s->len; i++) {
    const TraceSlice *x = &g_array_index(s, TraceSlice, i);
    if (i == 0 || x->track != (x - 1)->track || x->t0 - (x - 1)->t1 >= gap) n++;
  }
  return n;
}

/* One unit's tracks: a thread per track that has work, slices merged
 * across gaps shorter than `gap` (1: none). */
static void unit_tracks(Out *o, const Program *p, GArray *s, int pid, const char *what, int per_sm,
                        int64_t gap) {
  for (guint i = 0; i < s->len;) {
    const TraceSlice *x = &g_array_index(s, TraceSlice, i);
    if (i == 0 || x->track != (x - 1)->track) {
      g_autofree char *name = g_strdup_printf("sm%d %s%d", x->track / per_sm, what, x->track % per_sm);
      meta(o, "thread_name", pid, x->track, name, x->track);
    }
    guint j = i + 1;
    int64_t busy = x->t1 - x->t0, t1 = x->t1;
    while (j < s->len && g_array_index(s, TraceSlice, j).track == x->track &&
           g_array_index(s, TraceSlice, j).t0 - t1 < gap) {
      busy += g_array_index(s, TraceSlice, j).t1 - g_array_index(s, TraceSlice, j).t0;
      t1 = g_array_index(s, TraceSlice, j).t1;
      j++;
    }
    const Insn *in = &p->wgs[x->wg].insns[x->pc];
    g_autofree char *name = j == i + 1 ? g_strdup_printf("%s wg%d line %d", mnemonic(in), x->wg, in->line)
                                       : g_strdup_printf("busy (%u ops)", j - i);
    ev_begin(o, name, "X", pid, x->track, x->t0);
    mem_dur(o->b, x->t0, t1);
    jdoc_member(o->b, "args");
    jdoc_begin_object(o->b);
    mem_int(o->b, "wg", x->wg);
    mem_int(o->b, "line", in->line);
    if (j > i + 1) {
      mem_int(o->b, "ops", j - i);
      mem_int(o->b, "busy_cycles", busy);
    }
    jdoc_end_object(o->b);
    jdoc_end_object(o->b);
    emit(o);
    i = j;
  }
}

/* The MMA and DMA slices sorted by track and time, and the gap below which
 * slices of a track merge so that at most max_unit_slices remain. */
typedef struct UnitPlan {
  GArray *mma, *dma;
  int64_t gap, ops;
} UnitPlan;

static UnitPlan unit_plan(const SimTrace *t, const TraceLimits *lim) {
  UnitPlan u = {g_array_copy(t->mma), g_array_copy(t->dma), 1, t->mma->len + t->dma->len};
  g_array_sort(u.mma, by_track_time);
  g_array_sort(u.dma, by_track_time);
  /* at worst one slice per track (a gap longer than the run) */
  while (merged_count(u.mma, u.gap) + merged_count(u.dma, u.gap) > lim->max_unit_slices && u.gap <= t->cycles)
    u.gap *= 2;
  return u;
}

static char *unit_plan_text(const UnitPlan *u, const TraceLimits *lim) {
  if (u->gap == 1) return g_strdup_printf("one slice per operation (%" G_GINT64_FORMAT ")", u->ops);
  return g_strdup_printf("%" G_GINT64_FORMAT " operations; slices less than %" G_GINT64_FORMAT
                         " cycles apart on a track merged into one (limit %d)",
                         u->ops, u->gap, lim->max_unit_slices);
}

static void unit_section(Out *o, const Program *p, const UnitPlan *u) {
  meta(o, "process_name", PID_MMA, 0, "MMA arrays", PID_MMA);
  unit_tracks(o, p, u->mma, PID_MMA, "array", p->hw.mma_arrays, u->gap);
  meta(o, "process_name", PID_DMA, 0, "DMA engines", PID_DMA);
  unit_tracks(o, p, u->dma, PID_DMA, "engine", p->hw.dma_engines, u->gap);
}

/* ---- counters --------------------------------------------------------- */

/* Average power in mW over [a, b), static included. */
static int64_t avg_mw(const TraceRuns *r, const SimTrace *t, int64_t a, int64_t b) {
  return llround(trace_runs_avg_w(r, t->static_w, a, b) * 1e3);
}

/* Cycles per bucket in the file: the recorded size, doubled until the run
 * has at most max_buckets of them. */
static int64_t out_bucket(const SimTrace *t, const TraceLimits *lim) {
  int64_t b = t->bucket;
  while ((t->cycles + b - 1) / b > lim->max_buckets) b *= 2;
  return b;
}

static void counters(Out *o, const Program *p, const SimTrace *t, int64_t B) {
  int64_t nb = MAX((t->cycles + B - 1) / B, 1), f = B / t->bucket;
  double noc_bytes = p->hw.noc_bits / 8.0;
  meta(o, "process_name", PID_HBM, 0, "HBM channels", PID_HBM);
  meta(o, "process_name", PID_NOC, 0, "NoC links", PID_NOC);
  for (int c = 0; c < t->ncounters; c++) {
    gboolean hbm = c < t->hbm;
    int sm = hbm ? 0 : (c - t->hbm) % t->sms;
    g_autofree char *name = hbm ? g_strdup_printf("ch%d", c)
                                : g_strdup_printf("sm%d %s", sm, c < t->hbm + t->sms ? "in" : "out");
    const double *v = t->count + (size_t)c * TRACE_BUCKET_CAP;
    int64_t prev = -1;
    for (int64_t k = 0; k < nb; k++) {
      double sum = 0;
      for (int64_t i = k * f; i < (k + 1) * f && i < TRACE_BUCKET_CAP; i++) sum += v[i];
      double len = (double)MIN(B, MAX(t->cycles - k * B, 1));
      int64_t pct = llround(100.0 * sum / (len * (hbm ? 1.0 : noc_bytes)));
      if (pct != prev) counter(o, name, hbm ? PID_HBM : PID_NOC, k * B, "busy %", pct);
      prev = pct;
    }
    if (prev != 0) counter(o, name, hbm ? PID_HBM : PID_NOC, nb * B, "busy %", 0);
  }
}

static void power(Out *o, const SimTrace *t, int64_t B) {
  int64_t nb = MAX((t->cycles + B - 1) / B, 1);
  meta(o, "process_name", PID_POWER, 0, "power", PID_POWER);
  TraceRuns r;
  trace_runs_init(&r, t);
  int64_t prev = -1;
  g_autofree char *bucket = g_strdup_printf("power per %" G_GINT64_FORMAT "-cycle bucket", B);
  for (int64_t k = 0; k < nb; k++) {
    int64_t a = k * B, b = MIN((k + 1) * B, MAX(t->cycles, 1));
    int64_t mw = avg_mw(&r, t, a, b);
    if (mw != prev) counter(o, bucket, PID_POWER, a, "mW", mw);
    prev = mw;
  }
  /* the sliding window, sampled at each bucket start: [s, s + 1000) */
  prev = -1;
  int64_t last = MAX(t->cycles - POWER_WINDOW, 0);
  for (int64_t s = 0; s <= last; s += B) {
    int64_t mw = avg_mw(&r, t, s, s + POWER_WINDOW);
    if (mw != prev) counter(o, "power, 1000-cycle window from here", PID_POWER, s, "mW", mw);
    prev = mw;
  }
  trace_runs_clear(&r);
  /* the hottest window: a slice on its own track and a global instant */
  meta(o, "thread_name", PID_POWER, 1, "hottest window", 1);
  g_autofree char *name = g_strdup_printf("hottest window %.4f W", t->peak_w);
  ev_begin(o, name, "X", PID_POWER, 1, t->peak_start);
  mem_dur(o->b, t->peak_start, t->peak_start + POWER_WINDOW);
  jdoc_member(o->b, "args");
  jdoc_begin_object(o->b);
  mem_int(o->b, "start", t->peak_start);
  mem_int(o->b, "end", t->peak_start + POWER_WINDOW);
  mem_int(o->b, "peak_mw", llround(t->peak_w * 1e3));
  jdoc_end_object(o->b);
  jdoc_end_object(o->b);
  emit(o);
  ev_begin(o, name, "i", PID_POWER, 1, t->peak_start);
  mem_str(o->b, "s", "g");
  jdoc_end_object(o->b);
  emit(o);
}

/* ---- the file --------------------------------------------------------- */

/* The whole file: otherData (what the run was, how the events are
 * aggregated), then the events, streamed.  *note: the aggregation, if any. */
static void write_all(Out *o, const Program *p, const SimTrace *t, const TraceLimits *lim, char **note) {
  int64_t B = out_bucket(t, lim);
  WgPlan wp = wg_plan(p, t, lim);
  UnitPlan up = unit_plan(t, lim);
  g_autofree int *slice_of = slice_of_insns(p, t, &wp);
  FlowPlan fp = flow_plan(p, t, slice_of, lim);
  g_autofree char *insns = wg_plan_text(&wp, lim), *units = unit_plan_text(&up, lim);
  g_autofree char *arrows = flow_plan_text(&fp, lim);
  g_autofree char *prob = wl_problem_canonical(&p->prob);
  g_autofree char *mach = sim_machine_canonical(&p->hw);
  JDoc *b = o->b;
  jdoc_begin_object(b);
  mem_str(b, "version", TCC_SIM_VERSION);
  mem_str(b, "program", p->file);
  mem_str(b, "program_sha256", p->sha256);
  mem_str(b, "problem", prob + strlen(".problem "));
  mem_str(b, "hardware", mach + strlen(".machine "));
  mem_int(b, "cycles", t->cycles);
  mem_str(b, "time_unit", "1 ns in the viewer = 1 cycle (the machine runs at 1 GHz): ts and dur in "
                          "microseconds, cycles / 1000; args in cycles");
  mem_int(b, "bucket_cycles", B);
  mem_str(b, "instructions", insns);
  mem_str(b, "units", units);
  mem_str(b, "flows", arrows);
  mem_int(b, "max_insn_slices", lim->max_insn_slices);
  mem_int(b, "max_unit_slices", lim->max_unit_slices);
  mem_int(b, "max_flows", lim->max_flows);
  mem_int(b, "max_buckets", lim->max_buckets);
  jdoc_end_object(b);
  g_autofree char *otext = jdoc_compact_text(b, NULL);
  jdoc_reset(b);
  put(o, "{\"otherData\": ");
  put(o, otext);
  put(o, ",\n\"displayTimeUnit\": \"ns\",\n\"traceEvents\": [");
  int64_t *slice_tid = g_new(int64_t, MAX(wp.slices, 1));
  wg_tracks(o, p, t, &wp, slice_tid);
  flows(o, p, t, &fp, slice_tid);
  g_free(slice_tid);
  unit_section(o, p, &up);
  counters(o, p, t, B);
  power(o, t, B);
  put(o, "\n]}\n");
  g_array_free(up.mma, TRUE);
  g_array_free(up.dma, TRUE);
  g_array_free(fp.arrows, TRUE);
  *note = wp.level > 0 || up.gap > 1 || fp.over > 0 ? g_strdup_printf("%s; %s; %s", insns, units, arrows) : NULL;
}

char *trace_json(const Program *p, const SimTrace *t, const TraceLimits *lim, char **note, GError **err) {
  if (!jdoc_load(err)) return NULL;
  g_autoptr(JDoc) b = jdoc_new();
  Out o = {NULL, g_string_new(NULL), b, TRUE};
  write_all(&o, p, t, lim, note);
  return g_string_free(o.g, FALSE);
}

/* "FILE:1:1: error: cannot write: REASON", the name on one line */
static gboolean cannot_write(GError **err, const char *file, int code, const char *reason) {
  g_autofree char *name = text_escape(file); /* one line, whatever the name holds */
  g_set_error(err, G_FILE_ERROR, code, "%s:1:1: error: cannot write: %s", name, reason);
  return FALSE;
}

static gboolean json_module(GError **err) {
  g_autoptr(GError) lerr = NULL;
  if (jdoc_load(&lerr)) return TRUE;
  g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_NOENT, "tcc-sim: error: --trace: %s", lerr->message);
  return FALSE;
}

gboolean trace_write_to(const Program *p, const SimTrace *t, const TraceLimits *lim, FILE *f, const char *file,
                        char **note, GError **err) {
  if (!json_module(err)) return FALSE;
  g_autoptr(JDoc) b = jdoc_new();
  Out o = {f, NULL, b, TRUE};
  write_all(&o, p, t, lim, note);
  errno = 0;
  if (fflush(f) == 0 && !ferror(f)) return TRUE;
  int e = errno ? errno : EIO;
  g_clear_pointer(note, g_free);
  return cannot_write(err, file, g_file_error_from_errno(e), g_strerror(e));
}

gboolean trace_write(const Program *p, const SimTrace *t, const TraceLimits *lim, const char *file,
                     char **note, GError **err) {
  if (!json_module(err)) return FALSE;
  g_autoptr(GError) oe = NULL;
  OutFile *o = outfile_open(file, NULL, OUTFILE_DEFAULT, &oe);
  if (!o) return cannot_write(err, file, oe->code, oe->message);
  if (!trace_write_to(p, t, lim, outfile_stream(o), file, note, err)) {
    outfile_abandon(o);
    return FALSE;
  }
  if (outfile_commit(o, &oe)) return TRUE;
  g_clear_pointer(note, g_free);
  return cannot_write(err, file, oe->code, oe->message);
}
