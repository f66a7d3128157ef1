/* tcc_gen.c - the tcc-gen command: plan.yaml -> IR -> passes -> assembly.
 *
 * Exit codes: 0 = written, 2 = bad input (YAML, plan semantics, a plan that
 * does not fit the machine) or an I/O error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "explain.h"
#include "heap.h"
#include "outfile.h"
#include "fit.h"
#include "pipeline.h"
#include "stdout_check.h"
#include "text_escape.h"

/* The problem an output file's name names: its base name has the word
 * p1 or d1 (case aside) between its start or end and anything that is not
 * a letter or digit: d1.asm, P1.s, model-d1.asm, run_p1_v2.asm, not
 * dp1.asm.  -1 for none, or both. */
static int problem_of_output(const char *out) {
  if (!out || strcmp(out, "-") == 0) return -1;
  g_autofree char *base = g_path_get_basename(out);
  int found = -1;
  for (const char *s = base; *s; s++) {
    if (g_ascii_tolower(s[0]) != 'p' && g_ascii_tolower(s[0]) != 'd') continue;
    if (s[1] != '1' || (s > base && g_ascii_isalnum(s[-1])) || g_ascii_isalnum(s[2])) continue;
    int k = g_ascii_tolower(s[0]) == 'p' ? PROB_P1 : PROB_D1;
    if (found >= 0 && found != k) return -1;
    found = k;
  }
  return found;
}

/* The problem to compile: --problem, else the plan's only section, else
 * the one the output's name names (the card's `tcc-gen plan.yaml -o
 * d1.asm`). */
static gboolean pick_problem(const Plan *plan, const char *name, const char *out, ProblemKind *kind, GError **err) {
  if (name) {
    if (strcmp(name, "p1") && strcmp(name, "d1")) {
      g_set_error(err, IR_ERROR, 1, "tcc-gen: error: --problem must be p1 or d1, got '%s'", name);
      return FALSE;
    }
    *kind = strcmp(name, "p1") == 0 ? PROB_P1 : PROB_D1;
    return TRUE;
  }
  const PlanProblem *a = plan_problem(plan, PROB_P1), *b = plan_problem(plan, PROB_D1);
  int named = problem_of_output(out);
  if (a->present && b->present && named >= 0) {
    *kind = (ProblemKind)named;
    return TRUE;
  }
  if (a->present == b->present) { /* both: point at the second one; neither: at the top */
    PlanLoc at = !a->present ? (PlanLoc){1, 1, NULL} : a->where.line > b->where.line ? a->where : b->where;
    g_autofree char *name = text_escape(plan->file); /* one line, whatever the name holds */
    g_set_error(err, IR_ERROR, 1, "%s:%d:%d: error: %s; choose one with --problem p1|d1 (or an output named for it: "
                "-o d1.asm)", name, at.line, at.col,
                a->present ? "the plan has both p1 and d1 sections" : "the plan has no p1 or d1 section");
    return FALSE;
  }
  gboolean p1 = a->present;
  *kind = p1 ? PROB_P1 : PROB_D1;
  return TRUE;
}

/* Where the text goes: a file descriptor, written by a thread of its own
 * while the emitter prints the rest (the kernel's copy of a P1 program's
 * 18 MB into the page cache was ~7 ms of a 53 ms compile), and the errno
 * of the first failed write (0: none).  The text goes through a queue, in
 * order, in chunks of up to SINK_CHUNK bytes, in at most SINK_BUFFERS
 * buffers that are reused. */
typedef struct Chunk {
  gsize len;
  gboolean end;     /* the last: no text, the thread returns            */
  char data[];
} Chunk;

typedef struct Sink {
  int fd;
  int error;        /* the thread's, read once it has been joined        */
  gint failed;      /* atomic: the thread saw an error, stop emitting    */
  GAsyncQueue *full, *empty;
  Chunk *cur;       /* being filled                                      */
  int buffers;      /* allocated so far                                  */
  GThread *thread;
} Sink;

enum { SINK_CHUNK = 1 << 20, SINK_BUFFERS = 4 };

static gpointer sink_thread(gpointer data) {
  Sink *s = data;
  for (;;) {
    Chunk *c = g_async_queue_pop(s->full);
    if (c->end) {
      g_free(c);
      return NULL;
    }
    const char *text = c->data;
    gsize len = c->len;
    while (len > 0 && !s->error) {
      ssize_t n = write(s->fd, text, MIN(len, (gsize)1 << 30));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        s->error = errno;
        g_atomic_int_set(&s->failed, 1);
        break;
      }
      text += n;
      len -= (gsize)n;
    }
    g_async_queue_push(s->empty, c);
  }
}

static void sink_open(Sink *s, int fd) {
  *s = (Sink){.fd = fd};
  s->full = g_async_queue_new();
  s->empty = g_async_queue_new();
  s->thread = g_thread_new("tcc-gen-write", sink_thread, s);
}

/* A BeWrite: `text` on its way to the thread; FALSE once a write failed. */
static gboolean sink_write(const char *text, gsize len, gpointer data) {
  Sink *s = data;
  if (g_atomic_int_get(&s->failed)) return FALSE;
  while (len > 0) {
    if (!s->cur) {
      s->cur = s->buffers < SINK_BUFFERS ? g_async_queue_try_pop(s->empty) : g_async_queue_pop(s->empty);
      if (!s->cur) {
        s->cur = g_malloc(sizeof(Chunk) + SINK_CHUNK);
        s->buffers++;
      }
      s->cur->len = 0;
      s->cur->end = FALSE;
    }
    gsize n = MIN(len, SINK_CHUNK - s->cur->len);
    memcpy(s->cur->data + s->cur->len, text, n);
    s->cur->len += n;
    text += n;
    len -= n;
    if (s->cur->len == SINK_CHUNK) {
      g_async_queue_push(s->full, s->cur);
      s->cur = NULL;
    }
  }
  return TRUE;
}

/* The rest to the thread, which is then joined: s->error is final. */
static void sink_close(Sink *s) {
  if (s->cur && s->cur->len) g_async_queue_push(s->full, s->cur);
  else g_free(s->cur);
  Chunk *end = g_new0(Chunk, 1);
  end->end = TRUE;
  g_async_queue_push(s->full, end);
  g_thread_join(s->thread);
  Chunk *c;
  while ((c = g_async_queue_try_pop(s->empty))) g_free(c);
  g_async_queue_unref(s->full);
  g_async_queue_unref(s->empty);
}

/* "tcc-gen: error: cannot write 'FILE': REASON", or the plan refused. */
static void report_output_error(const char *file, const GError *err) {
  g_autofree char *name = text_escape(file); /* one line, whatever the name holds */
  if (g_error_matches(err, OUTFILE_ERROR, OUTFILE_ERROR_INPUT))
    fprintf(stderr, "tcc-gen: error: -o %s is the plan itself\n", name);
  else
    fprintf(stderr, "tcc-gen: error: cannot write '%s': %s\n", name, err->message);
}

/* -o FILE, opened once the IR is built (a plan that fails leaves FILE as it
 * was), as every output file is (outfile.h): the text goes to a temporary
 * file beside a regular FILE, put in its place once complete (swapped in:
 * outfile.c says why not a rename over it), so a reader finds the old text
 * or the new, never a mixture, and a failed write leaves the old; a device
 * or FIFO (-o /dev/null) is written through; the plan itself is refused.
 * Not synced: a program that a rerun recreates need not survive a power
 * cut.  The sink's thread writes to the file's descriptor.  NULL with the
 * line printed. */
static OutFile *open_output(const char *file, const char *plan) {
  g_autoptr(GError) err = NULL;
  OutFile *o = outfile_open(file, (const char *const[]){plan, NULL}, OUTFILE_DEFAULT, &err);
  if (!o) report_output_error(file, err);
  return o;
}

int main(int argc, char **argv) {
  heap_in_one_step();
  stdout_check_at_exit("tcc-gen", 2); /* a report that was not written is an error */
  g_autofree char *out = NULL, *problem = NULL, *emit = NULL, *dump_after = NULL;
  g_auto(GStrv) dumps = NULL;
  gboolean version = FALSE, verify = FALSE, explain = FALSE, json = FALSE, strict = FALSE, changed = FALSE;
  /* the pass names for --dump-after, and what each does for --help */
  g_autoptr(GString) names = g_string_new(NULL), passes = g_string_new("Passes, in order:\n");
  for (const PassDef *p = pass_table; p->name; p++) {
    g_string_append_printf(names, "%s%s", names->len ? ", " : "", p->name);
    g_string_append_printf(passes, "  %-9s %s\n", p->name, p->what);
  }
  g_autofree char *dump_help =
      g_strdup_printf("write the IR after PASS (%s, or all; repeatable), each after a header naming its pass, instead",
                      names->str);
  GOptionEntry entries[] = {
      {"output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "write to FILE (default: standard output)", "FILE"},
      {"problem", 0, 0, G_OPTION_ARG_STRING, &problem,
       "p1 or d1 (default: the plan's only section, or the problem the -o file's name names: d1.asm)", "P"},
      {"emit", 0, 0, G_OPTION_ARG_STRING, &emit, "what to write: asm (default) or ir", "KIND"},
      {"dump-after", 0, 0, G_OPTION_ARG_STRING_ARRAY, &dumps, dump_help, "PASS"},
      {"print-changed", 0, 0, G_OPTION_ARG_NONE, &changed,
       "with --dump-after (default: all), only the passes that changed the IR in full; the others as a header", NULL},
      {"verify", 0, 0, G_OPTION_ARG_NONE, &verify, "check the IR's invariants after every pass", NULL},
      {"strict", 0, 0, G_OPTION_ARG_NONE, &strict,
       "refuse a value that does not fit the shape, or a technique the machine cannot hold, instead of falling back", NULL},
      {"explain", 0, 0, G_OPTION_ARG_NONE, &explain,
       "write the capacity report (weights, RF, temp, history, panels, allocation) instead", NULL},
      {"json", 0, 0, G_OPTION_ARG_NONE, &json, "with --explain: the report as JSON", NULL},
      {"version", 0, 0, G_OPTION_ARG_NONE, &version, "print the version", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  g_autoptr(GOptionContext) ctx = g_option_context_new("PLAN.yaml - compile a plan to TCC assembly");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_summary(ctx, "Lowers a plan (docs/plan.md) through the IR and its passes to\n"
                                    "assembly for tcc-sim (docs/machine.md).\n"
                                    "Exit: 0 written, 2 bad input or a plan that does not fit.");
  g_option_context_set_description(ctx, passes->str);
  g_autoptr(GError) err = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    fprintf(stderr, "tcc-gen: error: %s\n", err->message);
    return 2;
  }
  if (version) {
    printf("tcc-gen 0.1.0 (plan v1, spec v%d)\n", TCC_SPEC_VERSION);
    return 0;
  }
  if (argc != 2) {
    fprintf(stderr, "tcc-gen: error: expected one plan file (see --help)\n");
    return 2;
  }
  if (json && !explain) {
    fprintf(stderr, "tcc-gen: error: --json goes with --explain\n");
    return 2;
  }
  if (changed && !dumps) dumps = g_strdupv((char *[]){"all", NULL});
  if (explain && (emit || dumps)) {
    fprintf(stderr, "tcc-gen: error: --explain writes the capacity report: not with --emit or --dump-after\n");
    return 2;
  }
  if (emit && strcmp(emit, "asm") && strcmp(emit, "ir")) {
    fprintf(stderr, "tcc-gen: error: --emit must be asm or ir, got '%s'\n", emit);
    return 2;
  }
  if (dumps) { /* the pipeline's spec: "changed:" and the names, comma-separated */
    g_autoptr(GString) spec = g_string_new(changed ? "changed:" : "");
    for (int i = 0; dumps[i]; i++) {
      gboolean known = strcmp(dumps[i], "all") == 0;
      for (const PassDef *p = pass_table; p->name; p++) known |= strcmp(p->name, dumps[i]) == 0;
      if (!known) {
        fprintf(stderr, "tcc-gen: error: --dump-after: unknown pass '%s' (passes: %s, or all)\n", dumps[i],
                names->str);
        return 2;
      }
      for (int j = 0; j < i; j++)
        if (strcmp(dumps[i], dumps[j]) == 0) {
          fprintf(stderr, "tcc-gen: error: --dump-after: '%s' is given twice\n", dumps[i]);
          return 2;
        }
      g_string_append_printf(spec, "%s%s", i ? "," : "", dumps[i]);
    }
    dump_after = g_string_free(g_steal_pointer(&spec), FALSE);
  }
  /* -o naming the plan is refused before anything is done (open_output
   * checks again when it opens the file) */
  if (out && strcmp(out, "-") != 0 && outfile_is_input(out, (const char *const[]){argv[1], NULL}, NULL)) {
    g_autoptr(GError) same = g_error_new_literal(OUTFILE_ERROR, OUTFILE_ERROR_INPUT, argv[1]);
    report_output_error(out, same);
    return 2;
  }
  g_autoptr(Plan) plan = plan_load_strict(argv[1], strict, &err);
  ProblemKind kind;
  if (!plan || !pick_problem(plan, problem, out, &kind, &err)) {
    fprintf(stderr, "%s\n", err->message);
    return 2;
  }
  for (guint i = 0; i < plan->warnings[kind]->len; i++) /* values the shape did not take */
    fprintf(stderr, "%s\n", (const char *)g_ptr_array_index(plan->warnings[kind], i));
  g_autofree char *dump = NULL;
  /* The IR lives until the process ends and the kernel takes it back:
   * freeing its ~270k ops one by one was ~5% of a P1 compile.  The static
   * pointer keeps it reachable for LeakSanitizer. */
  static Ir *ir;
  FitResult fit;
  ir = fit_pipeline(plan, kind, dump_after, &dump, verify, &fit, &err);
  for (guint i = 0; ir && ir->warnings && i < ir->warnings->len; i++) /* capacity fallbacks */
    fprintf(stderr, "%s\n", (const char *)g_ptr_array_index(ir->warnings, i));
  if (ir && fit.overrode) /* the plan's own pacing went over the limit */
    fprintf(stderr, "%s: warning: %s\n", plan->file, ir->fit_note);
  if (explain) { /* the report says why a plan does not fit: written either way */
    const PlanProblem *pp = plan_problem(plan, kind);
    g_free(dump);
    g_autoptr(GError) jerr = NULL;
    dump = json ? explain_json(&plan->hw, pp, plan->file, ir, ir ? NULL : err->message, &jerr)
                : explain_text(&plan->hw, pp, plan->file, ir, ir ? NULL : err->message);
    g_clear_error(&err);
    if (!dump) {
      fprintf(stderr, "tcc-gen: error: --json: %s\n", jerr->message);
      return 2;
    }
  }
  if (!ir && !explain) { /* a dump taken before the failing pass is still written */
    if (dump) stdout_put(dump);
    fprintf(stderr, "%s\n", err->message);
    return 2;
  }
  /* the assembly is streamed as it is printed; an IR text or a report is
   * written whole */
  gboolean to_file = out && strcmp(out, "-") != 0;
  OutFile *of = to_file ? open_output(out, argv[1]) : NULL;
  if (to_file && !of) return 2;
  Sink sink;
  sink_open(&sink, of ? fileno(outfile_stream(of)) : STDOUT_FILENO);
  g_autofree char *text = dump ? g_steal_pointer(&dump)
                          : emit && strcmp(emit, "ir") == 0 ? ir_print(ir) : NULL;
  if (text)
    sink_write(text, strlen(text), &sink);
  else
    be_emit_to(ir, sink_write, &sink);
  sink_close(&sink);
  if (!to_file && sink.error) { /* standard output written around stdio: its error here */
    stdout_check_failed(sink.error);
    return 2;
  }
  if (to_file && sink.error) {
    outfile_abandon(of); /* the file that was there stays */
    g_autoptr(GError) werr = g_error_new_literal(G_FILE_ERROR, g_file_error_from_errno(sink.error),
                                                 g_strerror(sink.error));
    report_output_error(out, werr);
    return 2;
  }
  if (to_file && !outfile_commit(of, &err)) {
    report_output_error(out, err);
    return 2;
  }
  return 0;
}
