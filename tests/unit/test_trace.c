/* test_trace.c - the --trace timeline (trace.c, trace_json.c; docs/tools.md
 * "Trace"): the JSON parses back (json-glib) with the fields the viewers
 * need, slices on a track never overlap, the hottest window is marked where
 * the report puts it, the same run gives the same bytes, tracing changes no
 * report, long runs aggregate within the limits and say so, and a file that
 * cannot be written is one diagnostic.  Times: ts and dur in microseconds,
 * a cycle being 1 ns (displayTimeUnit "ns"); the flow arrows from each SIG
 * to the WAITs it released bind to slices that exist, aggregated or not. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "tests.h"
#include "trace.h"

/* Run a program of the source tree with --trace (and --profile as given). */
static Program *run_traced(const char *rel, gboolean trace, gboolean profile, SimResult *r) {
  g_autoptr(GError) err = NULL;
  g_autofree char *path = g_strconcat(TCC_TOP "/", rel, NULL);
  Program *p = sim_asm_load(path, &err);
  ck_assert_msg(p != NULL, "%s", err ? err->message : "");
  SimOptions o;
  sim_options_default(&o);
  o.trace = trace;
  o.profile = profile;
  ck_assert_msg(sim_run(p, &o, r, &err), "%s", err ? err->message : "");
  ck_assert(!trace || r->trace != NULL);
  return p;
}

static char *json_of(const Program *p, const SimResult *r, const TraceLimits *lim, char **note) {
  TraceLimits d;
  trace_limits_default(&d);
  g_autoptr(GError) err = NULL;
  char *j = trace_json(p, r->trace, lim ? lim : &d, note, &err);
  ck_assert_msg(j, "%s", err ? err->message : "?");
  return j;
}

/* Parse and check the required fields of every event; counts per phase
 * and per pid of X events; the hottest-window slice's start. */
typedef struct Seen {
  int x, c, m, i;
  int x_pid[8];
  int64_t hot_start, hot_dur;
  int knobs;        /* X slices whose args carry the plan knob */
  int processes;    /* process_name records */
  int flows;        /* arrows: "s" and "f" pairs */
  int flow_named;   /* of them, from a slice "SIG ev.E" or "RED ev.E" to one "WAIT ev.E" (one per instruction) */
} Seen;

/* A time of the file (ts, dur: microseconds, a number) in cycles: exactly
 * a whole number of nanoseconds. */
static int64_t cycles_of(JsonObject *e, const char *k) {
  JsonNode *n = json_object_get_member(e, k);
  ck_assert_msg(n && JSON_NODE_HOLDS_VALUE(n) && (json_node_get_value_type(n) == G_TYPE_DOUBLE ||
                                                 json_node_get_value_type(n) == G_TYPE_INT64),
                "%s is not a number", k);
  double us = json_node_get_value_type(n) == G_TYPE_DOUBLE ? json_node_get_double(n) : (double)json_node_get_int(n);
  int64_t c = llround(us * 1000.0);
  ck_assert_msg(fabs(us * 1000.0 - (double)c) < 1e-6, "%s %.17g us is not whole cycles (ns)", k, us);
  return c;
}

/* One X slice of a track, for the flow ends: [t0, t1) in cycles. */
typedef struct Span {
  int64_t t0, t1;
  const char *name;
} Span;

/* The slice of track `key` whose [t0, t1) holds cycle ts (the viewers'
 * binding of a flow event), or NULL. */
static const Span *enclosing(GHashTable *tracks, const char *key, int64_t ts) {
  GArray *a = g_hash_table_lookup(tracks, key);
  for (guint i = 0; a && i < a->len; i++) {
    const Span *sp = &g_array_index(a, Span, i);
    if (sp->t0 <= ts && ts < sp->t1) return sp;
  }
  return NULL;
}

/* "WAIT ev.E ..." / "SIG ev.E, ..." / "RED ...": the event of an
 * instruction slice's name ("WAIT ev.qkv_l0 ..." names it by its task, so
 * take it from the text instead: NULL when the slice is not one instruction). */
static char *event_of(JsonObject *args) {
  if (!json_object_has_member(args, "text")) return NULL;
  const char *t = json_object_get_string_member(args, "text");
  const char *e = strstr(t, "ev.");
  if (!e) return NULL;
  size_t n = strcspn(e, ", \t;");
  return g_strndup(e, n);
}

static void free_array(gpointer a) { g_array_free(a, TRUE); }

static void check_trace(const char *json, Seen *s) {
  memset(s, 0, sizeof *s);
  s->hot_start = -1;
  g_autoptr(JsonParser) parser = json_parser_new();
  g_autoptr(GError) err = NULL;
  ck_assert_msg(json_parser_load_from_data(parser, json, -1, &err), "%s", err ? err->message : "");
  JsonObject *top = json_node_get_object(json_parser_get_root(parser));
  ck_assert(json_object_has_member(top, "otherData"));
  JsonObject *other = json_object_get_object_member(top, "otherData");
  ck_assert_str_eq(json_object_get_string_member(other, "version"), TCC_SIM_VERSION);
  ck_assert(json_object_get_int_member(other, "cycles") > 0);
  ck_assert(json_object_get_int_member(other, "bucket_cycles") >= 1);
  ck_assert_str_eq(json_object_get_string_member(top, "displayTimeUnit"), "ns");
  JsonArray *ev = json_object_get_array_member(top, "traceEvents");
  ck_assert(ev != NULL);
  /* per (pid, tid): the end of the last X slice, to check nesting */
  g_autoptr(GHashTable) ends = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  /* per (pid, tid): its X slices (Span); per flow id: its "s" event */
  g_autoptr(GHashTable) tracks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, free_array);
  g_autoptr(GHashTable) events = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GPtrArray) flow_ev = g_ptr_array_new();
  for (guint k = 0; k < json_array_get_length(ev); k++) {
    JsonObject *e = json_array_get_object_element(ev, k);
    const char *ph = json_object_get_string_member(e, "ph");
    ck_assert(json_object_has_member(e, "name") && json_object_has_member(e, "pid") &&
              json_object_has_member(e, "tid") && json_object_has_member(e, "ts"));
    int64_t pid = json_object_get_int_member(e, "pid"), tid = json_object_get_int_member(e, "tid");
    int64_t ts = cycles_of(e, "ts");
    ck_assert(ts >= 0);
    g_autofree char *key = g_strdup_printf("%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT, pid, tid);
    if (strcmp(ph, "X") == 0) {
      s->x++;
      ck_assert(pid >= 1 && pid < 8);
      s->x_pid[pid]++;
      int64_t dur = cycles_of(e, "dur");
      ck_assert(dur >= 1);
      /* as the viewers add them (doubles, speedscope and chrome://tracing):
       * ts + dur is the end's ts (or a rounding short of it, never past
       * it), so a slice never overlaps the next one of its track */
      double ts_us = json_node_get_double(json_object_get_member(e, "ts"));
      double end_us = ts_us + json_node_get_double(json_object_get_member(e, "dur"));
      double want = (double)(ts + dur) / 1000.0;
      ck_assert_msg(end_us <= want && want - end_us < 1e-12,
                    "%s at %" G_GINT64_FORMAT ": ts + dur = %.17g us, not %.17g", key, ts, end_us, want);
      double *end = g_hash_table_lookup(ends, key);
      ck_assert_msg(!end || *end <= ts_us, "overlap on %s at %" G_GINT64_FORMAT, key, ts);
      double *ne = g_new(double, 1);
      *ne = end_us;
      g_hash_table_replace(ends, g_strdup(key), ne);
      JsonObject *args = json_object_get_object_member(e, "args");
      ck_assert(args != NULL);
      if (pid == 1) ck_assert(json_object_has_member(args, "line") && json_object_has_member(args, "energy_pj"));
      if (pid == 1 && json_object_has_member(args, "knob")) s->knobs++;
      if (g_str_has_prefix(json_object_get_string_member(e, "name"), "hottest window")) {
        s->hot_start = ts;
        s->hot_dur = dur;
      }
      GArray *a = g_hash_table_lookup(tracks, key);
      if (!a) {
        a = g_array_new(FALSE, FALSE, sizeof(Span));
        g_hash_table_insert(tracks, g_strdup(key), a);
      }
      Span sp = {ts, ts + dur, json_object_get_string_member(e, "name")};
      g_array_append_val(a, sp);
      /* the instruction's event (for the flows' check), by slice */
      g_autofree char *evn = pid == 1 ? event_of(args) : NULL;
      if (evn) g_hash_table_insert(events, g_strdup_printf("%s@%" G_GINT64_FORMAT, key, ts), g_steal_pointer(&evn));
    } else if (strcmp(ph, "s") == 0 || strcmp(ph, "f") == 0) {
      ck_assert(json_object_has_member(e, "id"));
      ck_assert_str_eq(json_object_get_string_member(e, "cat"), "sync");
      ck_assert_int_eq(pid, 1);
      if (ph[0] == 'f') ck_assert_str_eq(json_object_get_string_member(e, "bp"), "e");
      g_ptr_array_add(flow_ev, e);
    } else if (strcmp(ph, "C") == 0) {
      s->c++;
      ck_assert(json_object_get_size(json_object_get_object_member(e, "args")) == 1);
    } else if (strcmp(ph, "M") == 0) {
      s->m++;
      if (strcmp(json_object_get_string_member(e, "name"), "process_name") == 0) s->processes++;
    } else {
      ck_assert_str_eq(ph, "i");
      s->i++;
    }
  }
  /* every arrow: an "s" then its "f" (same id, name and category: what
   * Perfetto matches; chrome://tracing matches the id), each at a cycle
   * inside an X slice of its track ([ts, ts + dur), where the viewers bind
   * it), the "f" not before the "s", on two different slices */
  g_autoptr(GHashTable) start = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  for (guint k = 0; k < flow_ev->len; k++) {
    JsonObject *e = g_ptr_array_index(flow_ev, k);
    gint64 *id = g_new(gint64, 1);
    *id = json_object_get_int_member(e, "id");
    g_autofree char *key = g_strdup_printf("1/%" G_GINT64_FORMAT, json_object_get_int_member(e, "tid"));
    int64_t ts = cycles_of(e, "ts");
    const Span *sp = enclosing(tracks, key, ts);
    ck_assert_msg(sp != NULL, "flow %" G_GINT64_FORMAT " (%s) at %" G_GINT64_FORMAT " on %s: no slice there", *id,
                  json_object_get_string_member(e, "ph"), ts, key);
    if (json_object_get_string_member(e, "ph")[0] == 's') {
      ck_assert_msg(!g_hash_table_contains(start, id), "flow id %" G_GINT64_FORMAT " starts twice", *id);
      g_hash_table_insert(start, id, e);
      continue;
    }
    JsonObject *b = g_hash_table_lookup(start, id);
    ck_assert_msg(b != NULL, "flow %" G_GINT64_FORMAT " ends before it starts", *id);
    g_hash_table_remove(start, id);
    ck_assert_str_eq(json_object_get_string_member(b, "name"), json_object_get_string_member(e, "name"));
    int64_t bts = cycles_of(b, "ts");
    ck_assert(bts <= ts);
    g_autofree char *bkey = g_strdup_printf("1/%" G_GINT64_FORMAT, json_object_get_int_member(b, "tid"));
    const Span *bsp = enclosing(tracks, bkey, bts);
    ck_assert_msg(bsp != sp, "flow %" G_GINT64_FORMAT " from a slice to itself", *id);
    s->flows++;
    /* one instruction at each end: SIG or RED ev.E -> WAIT ev.E, the
     * arrow's name, its "f" at the WAIT's issue (the slice's last cycle) */
    g_autofree char *ka = g_strdup_printf("%s@%" G_GINT64_FORMAT, bkey, bsp->t0);
    g_autofree char *kb = g_strdup_printf("%s@%" G_GINT64_FORMAT, key, sp->t0);
    const char *ea = g_hash_table_lookup(events, ka), *eb = g_hash_table_lookup(events, kb);
    if (ea && eb && (g_str_has_prefix(bsp->name, "SIG") || g_str_has_prefix(bsp->name, "RED")) &&
        g_str_has_prefix(sp->name, "WAIT")) {
      ck_assert_str_eq(ea, eb);
      ck_assert_str_eq(ea, json_object_get_string_member(e, "name"));
      ck_assert_int_eq(ts, sp->t1 - 1);
      ck_assert_int_eq(bts, bsp->t0);
      s->flow_named++;
    }
    g_free(id);
  }
  ck_assert_msg(g_hash_table_size(start) == 0, "a flow starts and never ends");
}

/* A compiled program (knob comments), default limits: one slice per
 * instruction and per MMA / DMA operation, six processes, the hottest
 * window where the report says. */
START_TEST(test_trace_fields) {
  SimResult r;
  g_autoptr(Program) p = run_traced("tests/golden/d1_small.asm", TRUE, FALSE, &r);
  g_autofree char *note = NULL;
  g_autofree char *json = json_of(p, &r, NULL, &note);
  ck_assert(note == NULL);
  Seen s;
  check_trace(json, &s);
  ck_assert_int_eq(s.processes, 6);
  ck_assert_int_eq(s.x_pid[1], (int)r.insns);
  ck_assert_int_eq(s.x_pid[2] + s.x_pid[3], (int)(r.trace->mma->len + r.trace->dma->len));
  ck_assert(s.x_pid[2] > 0 && s.x_pid[3] > 0);
  ck_assert(s.knobs > 0);
  ck_assert_int_eq(s.hot_start, r.peak_start);
  ck_assert_int_eq(s.hot_dur, POWER_WINDOW); /* 1000 cycles: dur 1 (us) */
  ck_assert(strstr(json, "\"dur\":1.0,") != NULL);
  ck_assert_int_eq(s.i, 1);
  ck_assert(s.c > 0);
  ck_assert(strstr(json, "\"instructions\":\"one slice per instruction"));
  /* d1_small: 10 WAITs released by a SIG, each an arrow from its SIG */
  ck_assert_int_eq((int)r.trace->flows->len, 10);
  ck_assert_int_eq(s.flows, 10);
  ck_assert_int_eq(s.flow_named, 10);
  ck_assert(strstr(json, "\"flows\":\"10 arrows from a SIG or RED to the WAIT it released (of 10 such WAITs)\""));
  sim_result_clear(&r);
}
END_TEST

/* Same input, same bytes; and tracing changes neither the text nor the
 * JSON report (with --profile, which shares the per-instruction energy). */
START_TEST(test_trace_deterministic_and_silent) {
  SimResult a, b, plain;
  g_autoptr(Program) pa = run_traced("tests/asm/tiny_p1.asm", TRUE, TRUE, &a);
  g_autoptr(Program) pb = run_traced("tests/asm/tiny_p1.asm", TRUE, TRUE, &b);
  g_autoptr(Program) pc = run_traced("tests/asm/tiny_p1.asm", FALSE, TRUE, &plain);
  g_autofree char *na = NULL, *nb = NULL;
  g_autofree char *ja = json_of(pa, &a, NULL, &na), *jb = json_of(pb, &b, NULL, &nb);
  ck_assert_str_eq(ja, jb);
  for (int json = 0; json < 2; json++)
    for (int profile = 0; profile < 2; profile++) {
      ReportOptions ro = {json, profile, 7};
      g_autofree char *with = sim_report(pa, &a, &ro, NULL), *without = sim_report(pc, &plain, &ro, NULL);
      ck_assert_str_eq(with, without);
    }
  sim_result_clear(&a);
  sim_result_clear(&b);
  sim_result_clear(&plain);
}
END_TEST

/* Over the limits: instructions aggregate per task, unit slices merge,
 * counters coarsen -- within the limits, and otherData and the note say so. */
START_TEST(test_trace_aggregates) {
  SimResult r;
  g_autoptr(Program) p = run_traced("tests/golden/d1_small.asm", TRUE, FALSE, &r);
  /* d1_small: 332 instructions, 106 unit operations on 48 tracks */
  TraceLimits lim = {.max_insn_slices = 40, .max_unit_slices = 60, .max_buckets = 10, .max_flows = 50000};
  g_autofree char *note = NULL;
  g_autofree char *json = json_of(p, &r, &lim, &note);
  ck_assert(note != NULL);
  ck_assert(strstr(note, "aggregated") && strstr(note, "merged"));
  Seen s;
  check_trace(json, &s); /* the arrows bind to the aggregated slices, or are left out */
  ck_assert(s.x_pid[1] > 0 && s.x_pid[1] <= 40);
  ck_assert(s.flows > 0 && s.flows <= 10);
  ck_assert(s.x_pid[2] + s.x_pid[3] <= 60);
  ck_assert(strstr(json, "\"instructions\":\"") && strstr(json, "instructions aggregated into"));
  g_autoptr(JsonParser) parser = json_parser_new();
  ck_assert(json_parser_load_from_data(parser, json, -1, NULL));
  JsonObject *other = json_object_get_object_member(json_node_get_object(json_parser_get_root(parser)), "otherData");
  int64_t B = json_object_get_int_member(other, "bucket_cycles");
  ck_assert((r.cycles + B - 1) / B <= 10);
  /* the tightest limits still make a valid file: at worst one slice per WG
   * and one per MMA array or DMA engine that worked */
  TraceLimits tiny = {.max_insn_slices = 1, .max_unit_slices = 1, .max_buckets = 1, .max_flows = 50000};
  g_autofree char *n2 = NULL;
  g_autofree char *j2 = json_of(p, &r, &tiny, &n2);
  check_trace(j2, &s);
  ck_assert(strstr(j2, "instructions from ") && strstr(j2, "\"first_task\":"));
  ck_assert(strstr(n2, "slices of up to "));
  int active = 0;
  for (int w = 0; w < p->nwgs; w++) active += p->wgs[w].n > 0;
  ck_assert_int_le(s.x_pid[1], active);
  ck_assert_int_le(s.x_pid[2], p->hw.sms * p->hw.mma_arrays);
  ck_assert_int_le(s.x_pid[3], p->hw.sms * p->hw.dma_engines);
  /* one slice per WG: d1_small's 10 arrows join 10 different pairs of WGs */
  ck_assert_int_eq(s.flows, 10);
  sim_result_clear(&r);
  /* a program whose arrows then fall inside one WG's slice (left out) or
   * repeat a pair of slices (drawn once) */
  g_autoptr(Program) q = run_traced("tests/golden/d1_deferred_after.asm", TRUE, FALSE, &r);
  g_autofree char *n3 = NULL;
  g_autofree char *j3 = json_of(q, &r, &tiny, &n3);
  check_trace(j3, &s);
  ck_assert_msg(strstr(n3, "arrows from a SIG or RED to the WAIT it released (of 89 such WAITs; 2 inside one "
                           "aggregated slice; 45 between the same two slices as another)"), "%s", n3);
  ck_assert_int_eq(s.flows, 89 - 2 - 45);
  sim_result_clear(&r);
}
END_TEST

/* The stall of the WAIT each arrow of `json` ends in (its slice ends one
 * cycle after the "f"), in cycles. */
static GArray *arrow_stalls(const char *json) {
  g_autoptr(JsonParser) parser = json_parser_new();
  ck_assert(json_parser_load_from_data(parser, json, -1, NULL));
  JsonArray *ev = json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)), "traceEvents");
  GArray *stall = g_array_new(FALSE, FALSE, sizeof(int64_t));
  for (guint k = 0; k < json_array_get_length(ev); k++) {
    JsonObject *e = json_array_get_object_element(ev, k);
    if (strcmp(json_object_get_string_member(e, "ph"), "f") != 0) continue;
    int64_t ts = cycles_of(e, "ts"), tid = json_object_get_int_member(e, "tid");
    for (guint j = 0; j < json_array_get_length(ev); j++) {
      JsonObject *x = json_array_get_object_element(ev, j);
      if (strcmp(json_object_get_string_member(x, "ph"), "X") == 0 && json_object_get_int_member(x, "pid") == 1 &&
          json_object_get_int_member(x, "tid") == tid && cycles_of(x, "ts") + cycles_of(x, "dur") == ts + 1) {
        int64_t d = cycles_of(x, "dur");
        g_array_append_val(stall, d);
      }
    }
  }
  return stall;
}

/* The arrows are bounded: past max_flows those of the shortest WAITs are
 * left out, and otherData and the note say so; 0 draws none. */
START_TEST(test_trace_flow_limit) {
  SimResult r;
  g_autoptr(Program) p = run_traced("tests/golden/d1_small.asm", TRUE, FALSE, &r);
  TraceLimits lim;
  trace_limits_default(&lim);
  ck_assert_int_eq(lim.max_flows, 50000);
  g_autofree char *n0 = NULL;
  g_autofree char *all = json_of(p, &r, &lim, &n0);
  ck_assert(n0 == NULL);
  lim.max_flows = 3;
  g_autofree char *note = NULL;
  g_autofree char *json = json_of(p, &r, &lim, &note);
  Seen s;
  check_trace(json, &s);
  ck_assert_int_eq(s.flows, 3);
  ck_assert_msg(note && strstr(note, "3 arrows from a SIG or RED to the WAIT it released (of 10 such WAITs; "
                                     "7 of the shortest WAITs past the limit of 3)"), "%s", note ? note : "");
  /* the three kept are the longest WAITs: no WAIT left out is longer */
  GArray *every = arrow_stalls(all), *kept = arrow_stalls(json);
  ck_assert_int_eq(every->len, 10);
  ck_assert_int_eq(kept->len, 3);
  int64_t kept_min = INT64_MAX;
  int longer = 0;
  for (guint i = 0; i < kept->len; i++) kept_min = MIN(kept_min, g_array_index(kept, int64_t, i));
  for (guint i = 0; i < every->len; i++) longer += g_array_index(every, int64_t, i) > kept_min;
  ck_assert_int_le(longer, 2);
  g_array_free(every, TRUE);
  g_array_free(kept, TRUE);
  lim.max_flows = 0;
  g_autofree char *n2 = NULL;
  g_autofree char *none = json_of(p, &r, &lim, &n2);
  check_trace(none, &s);
  ck_assert_int_eq(s.flows, 0);
  sim_result_clear(&r);
}
END_TEST

/* A file that cannot be written: one diagnostic, FILE:1:1. */
START_TEST(test_trace_write_error) {
  SimResult r;
  g_autoptr(Program) p = run_traced("tests/asm/tiny_d1.asm", TRUE, FALSE, &r);
  TraceLimits lim;
  trace_limits_default(&lim);
  g_autoptr(GError) err = NULL;
  g_autofree char *note = NULL;
  ck_assert(!trace_write(p, r.trace, &lim, "/nonexistent-dir/t.json", &note, &err));
  ck_assert_str_eq(err->message, "/nonexistent-dir/t.json:1:1: error: cannot write: No such file or directory");
  /* and one that can: the same bytes as the string */
  g_autofree char *dir = g_dir_make_tmp("tcc-trace-XXXXXX", NULL);
  g_autofree char *file = g_build_filename(dir, "t.json", NULL);
  ck_assert(trace_write(p, r.trace, &lim, file, &note, NULL));
  g_autofree char *text = NULL, *want = json_of(p, &r, NULL, &note);
  ck_assert(g_file_get_contents(file, &text, NULL, NULL));
  ck_assert_str_eq(text, want);
  g_remove(file);
  g_rmdir(dir);
  sim_result_clear(&r);
}
END_TEST

/* The rules of the Chrome trace-event format (JSON Object Format) that
 * Perfetto's and chrome://tracing's JSON importers rely on, checked on a
 * file written by trace_write and read back by json-glib: a top-level
 * object with a traceEvents array (and otherData, and displayTimeUnit
 * "ns" or "ms", the two units the viewers take); every event an object
 * with a string name and ph, integer pid and tid, a number ts >= 0
 * (microseconds); ph one of X (complete: number dur >= 0), C (counter:
 * args of numbers only, one series per name), M (metadata: process_name /
 * thread_name with a string args.name, process_sort_index /
 * thread_sort_index with an integer args.sort_index), i (instant: scope s
 * in g, p, t) and s / f (flow start and end: an integer id and a string
 * cat, "bp":"e" on the end); and every process and every thread with
 * slices named by an M event, so that no track shows as a bare number. */
static gboolean is_num(JsonObject *o, const char *k) {
  JsonNode *n = json_object_get_member(o, k);
  return n && JSON_NODE_HOLDS_VALUE(n) &&
         (json_node_get_value_type(n) == G_TYPE_INT64 || json_node_get_value_type(n) == G_TYPE_DOUBLE);
}

static gboolean is_int(JsonObject *o, const char *k) {
  JsonNode *n = json_object_get_member(o, k);
  return n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_INT64;
}

static gboolean is_str(JsonObject *o, const char *k) {
  JsonNode *n = json_object_get_member(o, k);
  return n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING;
}

static void check_format_rules(const char *file) {
  g_autoptr(JsonParser) parser = json_parser_new();
  g_autoptr(GError) err = NULL;
  ck_assert_msg(json_parser_load_from_file(parser, file, &err), "%s", err ? err->message : "");
  JsonNode *root = json_parser_get_root(parser);
  ck_assert(JSON_NODE_HOLDS_OBJECT(root));
  JsonObject *top = json_node_get_object(root);
  JsonNode *evn = json_object_get_member(top, "traceEvents");
  ck_assert(evn && JSON_NODE_HOLDS_ARRAY(evn));
  ck_assert(JSON_NODE_HOLDS_OBJECT(json_object_get_member(top, "otherData")));
  const char *unit = is_str(top, "displayTimeUnit") ? json_object_get_string_member(top, "displayTimeUnit") : "";
  ck_assert_msg(strcmp(unit, "ns") == 0 || strcmp(unit, "ms") == 0, "displayTimeUnit '%s'", unit);
  JsonArray *ev = json_node_get_array(evn);
  ck_assert(json_array_get_length(ev) > 0);
  g_autoptr(GHashTable) named = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) used = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  int phases[5] = {0}; /* X, C, M, i, s and f */
  for (guint k = 0; k < json_array_get_length(ev); k++) {
    JsonNode *en = json_array_get_element(ev, k);
    ck_assert(JSON_NODE_HOLDS_OBJECT(en));
    JsonObject *e = json_node_get_object(en);
    ck_assert_msg(is_str(e, "name") && is_str(e, "ph") && is_int(e, "pid") && is_int(e, "tid") && is_num(e, "ts"),
                  "event %u lacks name, ph, pid, tid or ts", k);
    ck_assert(json_node_get_double(json_object_get_member(e, "ts")) >= 0);
    const char *ph = json_object_get_string_member(e, "ph"), *name = json_object_get_string_member(e, "name");
    int64_t pid = json_object_get_int_member(e, "pid"), tid = json_object_get_int_member(e, "tid");
    JsonNode *an = json_object_get_member(e, "args");
    JsonObject *args = an && JSON_NODE_HOLDS_OBJECT(an) ? json_node_get_object(an) : NULL;
    if (strcmp(ph, "X") == 0) {
      phases[0]++;
      ck_assert(is_num(e, "dur") && json_node_get_double(json_object_get_member(e, "dur")) >= 0);
      g_hash_table_add(used, g_strdup_printf("t %" G_GINT64_FORMAT "/%" G_GINT64_FORMAT, pid, tid));
      g_hash_table_add(used, g_strdup_printf("p %" G_GINT64_FORMAT, pid));
    } else if (strcmp(ph, "C") == 0) {
      phases[1]++;
      ck_assert(args && json_object_get_size(args) >= 1);
      g_autoptr(GList) ms = json_object_get_members(args);
      for (GList *m = ms; m; m = m->next) {
        JsonNode *v = json_object_get_member(args, m->data);
        ck_assert_msg(JSON_NODE_HOLDS_VALUE(v) && (json_node_get_value_type(v) == G_TYPE_INT64 ||
                                                   json_node_get_value_type(v) == G_TYPE_DOUBLE),
                      "counter %s: %s is not a number", name, (const char *)m->data);
      }
      g_hash_table_add(used, g_strdup_printf("p %" G_GINT64_FORMAT, pid));
    } else if (strcmp(ph, "M") == 0) {
      phases[2]++;
      ck_assert(args != NULL);
      if (strcmp(name, "process_name") == 0 || strcmp(name, "thread_name") == 0) {
        ck_assert(is_str(args, "name") && *json_object_get_string_member(args, "name"));
        g_hash_table_add(named, name[0] == 'p' ? g_strdup_printf("p %" G_GINT64_FORMAT, pid)
                                               : g_strdup_printf("t %" G_GINT64_FORMAT "/%" G_GINT64_FORMAT, pid, tid));
      } else {
        ck_assert_msg(strcmp(name, "process_sort_index") == 0 || strcmp(name, "thread_sort_index") == 0,
                      "metadata event %s", name);
        ck_assert(is_int(args, "sort_index"));
      }
    } else if (strcmp(ph, "s") == 0 || strcmp(ph, "f") == 0) {
      phases[4]++;
      ck_assert(is_int(e, "id") && is_str(e, "cat"));
      if (ph[0] == 'f') ck_assert(is_str(e, "bp") && strcmp(json_object_get_string_member(e, "bp"), "e") == 0);
    } else {
      ck_assert_str_eq(ph, "i");
      phases[3]++;
      const char *sc = is_str(e, "s") ? json_object_get_string_member(e, "s") : "t";
      ck_assert(strcmp(sc, "g") == 0 || strcmp(sc, "p") == 0 || strcmp(sc, "t") == 0);
    }
  }
  for (int i = 0; i < 5; i++) ck_assert_msg(phases[i] > 0, "no event of phase %d", i);
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, used);
  while (g_hash_table_iter_next(&it, &key, NULL))
    ck_assert_msg(g_hash_table_contains(named, key), "track %s has no name", (const char *)key);
}

START_TEST(test_trace_format_rules) {
  static const char *const progs[] = {"tests/golden/d1_small.asm", "tests/asm/tiny_p1.asm"};
  g_autofree char *dir = g_dir_make_tmp("tcc-trace-XXXXXX", NULL);
  g_autofree char *file = g_build_filename(dir, "t.json", NULL);
  for (guint i = 0; i < G_N_ELEMENTS(progs); i++) {
    SimResult r;
    g_autoptr(Program) p = run_traced(progs[i], TRUE, FALSE, &r);
    TraceLimits lims[2];
    trace_limits_default(&lims[0]);
    lims[1] = (TraceLimits){.max_insn_slices = 5, .max_unit_slices = 5, .max_buckets = 3, .max_flows = 5}; /* aggregated */
    for (int l = 0; l < 2; l++) {
      g_autofree char *note = NULL;
      ck_assert(trace_write(p, r.trace, &lims[l], file, &note, NULL));
      check_format_rules(file);
    }
    sim_result_clear(&r);
  }
  g_remove(file);
  g_rmdir(dir);
}
END_TEST

Suite *suite_trace(void) {
  Suite *s = suite_create("trace");
  TCase *tc = tcase_create("trace_json");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_trace_fields);
  tcase_add_test(tc, test_trace_deterministic_and_silent);
  tcase_add_test(tc, test_trace_aggregates);
  tcase_add_test(tc, test_trace_flow_limit);
  tcase_add_test(tc, test_trace_write_error);
  tcase_add_test(tc, test_trace_format_rules);
  suite_add_tcase(s, tc);
  return s;
}
