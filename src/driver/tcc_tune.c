/* tcc_tune.c - the tcc-tune command: a seeded local search over a plan's
 * knobs for one problem's cycles, or both problems' score, within the power
 * and area limits (tune.h; docs/tools.md, "tcc-tune").
 *
 * Exit codes: 0 = the best point passes (power and area, and its numerics
 * on the grade seeds), 1 = no point measured passes, 2 = bad input
 * (options, the template, a knob the template does not set, a start that
 * does not compile) or an I/O error. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "file_read.h"
#include "heap.h"
#include "jobs.h"
#include "outfile.h"
#include "tune.h"
#include "stdout_check.h"
#include "text_escape.h"

#define TCC_TUNE_VERSION "tcc-tune 0.1.0"

static int usage(const char *msg) {
  fprintf(stderr, "tcc-tune: error: %s\n", msg);
  return 2;
}

/* The numeric options are read as text, not as G_OPTION_ARG_INT or
 * _DOUBLE, so that no value a user can type (-1 was the "not given" mark)
 * is taken silently: each is checked against its range, and refused with
 * "tcc-tune: error: --NAME must be RANGE, got 'TEXT'" (one line). */
static gboolean bad_arg(const char *name, const char *range, const char *text) {
  g_autofree char *q = text_escape(text);
  fprintf(stderr, "tcc-tune: error: --%s must be %s, got '%s'\n", name, range, q);
  return FALSE;
}

/* A decimal integer in lo..hi (no blanks) into *v. */
static gboolean int_arg(const char *name, const char *text, gint64 lo, gint64 hi, gint64 *v) {
  if (g_ascii_string_to_signed(text, 10, lo, hi, v, NULL)) return TRUE;
  g_autofree char *range = g_strdup_printf("%" G_GINT64_FORMAT "..%" G_GINT64_FORMAT, lo, hi);
  return bad_arg(name, range, text);
}

/* A number in (lo, hi] (no blanks) into *v; `range` says so. */
static gboolean real_arg(const char *name, const char *text, double lo, double hi, const char *range, double *v) {
  char *end = NULL;
  double x = *text && !g_ascii_isspace(*text) ? g_ascii_strtod(text, &end) : 0;
  if (!end || *end || !(x > lo && x <= hi)) return bad_arg(name, range, text); /* NaN fails too */
  *v = x;
  return TRUE;
}

static int fail(const GError *err) {
  if (err->domain == TUNE_ERROR && err->code != TUNE_ERROR_PLACED) return usage(err->message);
  fprintf(stderr, "%s\n", err->message);
  return 2;
}

static void describe(const TunePoint *p, char *buf, size_t n) {
  if (p->m.status == TUNE_ERROR_POINT || p->m.status == TUNE_REFUSED)
    snprintf(buf, n, "%s", tune_status_name[p->m.status]);
  else if (p->m.d1_cycles > 0)
    snprintf(buf, n, "p1 %" PRId64 ", d1 %" PRId64 " cycles (score %.2f), %.4f W, %.4f mm2 (%s)", p->m.cycles,
             p->m.d1_cycles, wl_score(p->m.cycles, p->m.d1_cycles), p->m.peak_w, p->m.area_mm2,
             tune_status_name[p->m.status]);
  else
    snprintf(buf, n, "%" PRId64 " cycles, %.4f W, %.4f mm2 (%s)", p->m.cycles, p->m.peak_w, p->m.area_mm2,
             tune_status_name[p->m.status]);
}

/* DIR/NAME written whole, synced, as every output file is (outfile.h),
 * never over the template; FALSE with the message printed. */
static gboolean write_out(const char *dir, const char *name, const char *text, const char *template_path) {
  g_autofree char *path = g_build_filename(dir, name, NULL);
  g_autoptr(GError) e = NULL;
  if (outfile_write(path, text, -1, (const char *const[]){template_path, NULL}, OUTFILE_SYNC, &e)) return TRUE;
  g_autofree char *q = text_escape(path);
  if (g_error_matches(e, OUTFILE_ERROR, OUTFILE_ERROR_INPUT))
    fprintf(stderr, "tcc-tune: error: -o DIR: %s is the template itself; give another -o DIR\n", q);
  else
    fprintf(stderr, "tcc-tune: error: cannot write '%s': %s\n", q, e->message);
  return FALSE;
}

/* The log and the best plan so far, after the start and after every round
 * (so that an interrupted search leaves what it has measured). */
static gboolean write_both(const Tune *t, const char *dir) {
  g_autoptr(GError) err = NULL;
  g_autofree char *csv = tune_log_csv(t), *best = tune_best_text(t, &err);
  if (!best) {
    fprintf(stderr, "tcc-tune: error: %s\n", err->message);
    return FALSE;
  }
  return write_out(dir, "tune.csv", csv, t->template_path) && write_out(dir, "best.yaml", best, t->template_path);
}

/* Whether directories a and b are the same one (both exist). */
static gboolean same_dir(const char *a, const char *b) {
  GStatBuf x, y;
  return g_stat(a, &x) == 0 && g_stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* -o DIR, before anything is measured or written: the search writes
 * DIR/tune.csv and DIR/best.yaml, so neither may be the template, and a
 * DIR that holds them already (an earlier search's answer and its log)
 * is taken only by --resume of that DIR, which goes on with them.  FALSE
 * with the line printed (exit 2). */
static gboolean check_out_dir(const char *out, const char *template_path, const char *resume) {
  static const char *const names[] = {"best.yaml", "tune.csv"};
  for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
    g_autofree char *path = g_build_filename(out, names[i], NULL);
    if (outfile_is_input(path, (const char *const[]){template_path, NULL}, NULL)) {
      g_autofree char *q = text_escape(path);
      fprintf(stderr, "tcc-tune: error: -o DIR: %s is the template itself; give another -o DIR\n", q);
      return FALSE;
    }
  }
  if (resume && same_dir(out, resume)) return TRUE;
  for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
    g_autofree char *path = g_build_filename(out, names[i], NULL);
    GStatBuf st;
    if (g_stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue; /* a file a search would replace */
    g_autofree char *q = text_escape(out);
    fprintf(stderr, "tcc-tune: error: -o %s holds the files of a search (%s): --resume %s goes on with it; or give "
                    "another -o DIR\n", q, names[i], q);
    return FALSE;
  }
  return TRUE;
}

typedef struct Progress {
  const char *dir;
  gboolean draw;     /* the progress line on standard error */
  gboolean failed;   /* a write failed (reported): the search stopped */
  gint64 start;      /* g_get_monotonic_time at the start (progress only) */
  double seconds;    /* --time: stop after the round that passes it (0: none) */
  gboolean timed_out;
} Progress;

static gboolean progress(const Tune *t, int round, gpointer data) {
  Progress *pr = data;
  if (!write_both(t, pr->dir)) {
    pr->failed = TRUE;
    return FALSE; /* no use searching on */
  }
  double elapsed = (double)(g_get_monotonic_time() - pr->start) / 1e6;
  if (pr->seconds > 0 && elapsed >= pr->seconds) pr->timed_out = TRUE;
  if (!pr->draw) return !pr->timed_out;
  /* the ETA: the rounds left at this round's mean pace, or the budget's */
  double left = round > 0 ? elapsed / round * (t->opt.rounds - round) : 0;
  if (t->opt.max_evals > 0 && t->points->len > 1)
    left = MIN(left, elapsed / t->points->len * ((double)t->opt.max_evals - t->points->len));
  if (pr->seconds > 0) left = MIN(left, pr->seconds - elapsed);
  char b[160], el[32], eta[32];
  describe(g_ptr_array_index(t->points, t->best), b, sizeof b);
  jobs_clock_text(elapsed, el, sizeof el);
  jobs_clock_text(MAX(left, 0), eta, sizeof eta);
  fprintf(stderr, "\r\033[Ktcc-tune %s, round %d/%d, ETA %s: %u points, best %s", el, round, t->opt.rounds, eta,
          t->points->len, b);
  fflush(stderr);
  return !pr->timed_out;
}

int main(int argc, char **argv) {
  heap_in_one_step();
  stdout_check_at_exit("tcc-tune", 2); /* a report that was not written is an error */
  g_auto(GStrv) knob_args = NULL;
  g_autofree char *out = NULL, *problem = NULL, *resume = NULL, *engine = NULL, *sshlogin = NULL,
                  *eval_job = NULL, *eval_as = NULL;
  gboolean version = FALSE, no_progress = FALSE, restarts = FALSE, no_screen = FALSE;
  /* the numeric options as text (NULL: not given), checked below */
  g_autofree char *rounds_arg = NULL, *candidates_arg = NULL, *jobs_arg = NULL, *evals_arg = NULL, *seed_arg = NULL,
                  *step_arg = NULL, *time_arg = NULL;
  gint64 rounds = -1, candidates = -1, jobs = -1, evals = -1, seed = -1;
  double step = -1, seconds = -1, eval_cap = 0;
  GOptionEntry entries[] = {
      {"problem", 0, 0, G_OPTION_ARG_STRING, &problem,
       "what to lower: p1's or d1's cycles, or both (P1 x D1: the score goes up)", "P"},
      {"knob", 0, 0, G_OPTION_ARG_STRING_ARRAY, &knob_args,
       "search plan key KEY.PATH over the integers LO..HI or the values V1,V2,... (repeatable; the "
       "template sets where the search starts; none: every knob of the plan schema)", "KEY.PATH=LO..HI"},
      {"output", 'o', 0, G_OPTION_ARG_FILENAME, &out,
       "where best.yaml and tune.csv go (created; not a DIR that holds another search's, nor over the template)",
       "DIR"},
      {"resume", 0, 0, G_OPTION_ARG_FILENAME, &resume,
       "go on with the search whose files are in DIR (its tune.csv's points are not measured again; give "
       "the same template and options, and a larger budget); -o defaults to DIR", "DIR"},
      {"rounds", 0, 0, G_OPTION_ARG_STRING, &rounds_arg, "rounds of the search, 0..10000 (default 20)", "N"},
      {"evals", 0, 0, G_OPTION_ARG_STRING, &evals_arg,
       "stop after N points measured, the start included, 1..10000000 (the same result on every machine)", "N"},
      {"time", 0, 0, G_OPTION_ARG_STRING, &time_arg,
       "stop after the round that passes S seconds, (0, 31536000] (the result depends on the machine)", "S"},
      {"candidates", 0, 0, G_OPTION_ARG_STRING, &candidates_arg, "points tried per round, 1..1000 (default 8)", "K"},
      {"seed", 0, 0, G_OPTION_ARG_STRING, &seed_arg, "the search's seed, 0..4294967295 (default 1)", "S"},
      {"step", 0, 0, G_OPTION_ARG_STRING, &step_arg,
       "first step, a fraction of each knob's values, (0, 1] (default 0.125)", "F"},
      {"jobs", 'j', 0, G_OPTION_ARG_STRING, &jobs_arg,
       "simulate N points at once, 1..256 (default: the processors; the results do not depend on it)", "N"},
      {"engine", 0, 0, G_OPTION_ARG_STRING, &engine,
       "where a round's points run: threads (here, default), parallel (GNU parallel) or slurm (a job array, "
       "sbatch --wait); the same results", "E"},
      {"sshlogin", 0, 0, G_OPTION_ARG_STRING, &sshlogin,
       "with --engine parallel: parallel's --sshlogin (machines that share DIR)", "S"},
      {"eval-job", 0, 0, G_OPTION_ARG_FILENAME, &eval_job,
       "measure one point's plan FILE and write FILE.measure (the engines' job lines)", "FILE"},
      {"eval-as", 0, 0, G_OPTION_ARG_STRING, &eval_as, "with --eval-job: the name its messages give the plan",
       "NAME"},
      {"eval-cap", 0, 0, G_OPTION_ARG_DOUBLE, &eval_cap,
       "with --eval-job: the best objective so far, which the point must beat (0: none)", "X"},
      {"no-screen", 0, 0, G_OPTION_ARG_NONE, &no_screen,
       "without --knob, do not begin with the screening rounds (every technique switched on alone, with its companions, then the winners combined)", NULL},
      {"restarts", 0, 0, G_OPTION_ARG_NONE, &restarts,
       "once the search converges (steps of 1 without a better point), start again from the best with the "
       "first steps, instead of stopping", NULL},
      {"no-progress", 0, 0, G_OPTION_ARG_NONE, &no_progress, "never draw the progress line", NULL},
      {"version", 0, 0, G_OPTION_ARG_NONE, &version, "print the version", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  g_autoptr(GOptionContext) ctx =
      g_option_context_new("TEMPLATE.yaml --problem p1|d1|both --knob KEY.PATH=LO..HI... -o DIR");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_summary(
      ctx, "Searches the plan's knobs for fewer cycles of one problem (or a higher\n"
           "score, both) within 20 W and 24 mm2: rounds of K points drawn around the\n"
           "best so far from a seeded generator, each compiled (power-fitted) and\n"
           "simulated for its timing; a knob switched on brings the knobs it needs.\n"
           "Without --knob the space is every knob of the plan schema for the problem\n"
           "(and the hardware's, for both).  The best point's numerics are checked\n"
           "on the grade seeds before it is written.\n"
           "Writes DIR/best.yaml and DIR/tune.csv (every point); the same options give\n"
           "the same files (docs/tools.md, \"tcc-tune\").\n"
           "Exit: 0 the best point passes, 1 no point passes, 2 bad input.");
  g_autoptr(GError) err = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) return usage(err->message);
  if (version) {
    printf("%s\n", TCC_TUNE_VERSION);
    return 0;
  }
  if (argc != 2 && !eval_job) return usage("expected one template plan (see --help)");
  if (!problem) return usage("--problem p1|d1|both is required: what to lower");
  TuneOptions opt;
  tune_options_default(&opt);
  if (strcmp(problem, "p1") == 0)
    opt.target = TUNE_TARGET_P1;
  else if (strcmp(problem, "d1") == 0)
    opt.target = TUNE_TARGET_D1;
  else if (strcmp(problem, "both") == 0)
    opt.target = TUNE_TARGET_BOTH;
  else {
    g_autofree char *m = g_strdup_printf("--problem must be p1, d1 or both, got '%s'", problem);
    return usage(m);
  }
  if (eval_job) { /* one job of an engine: the measure next to the plan */
    if (argc != 1) return usage("--eval-job takes no template");
    if (!(eval_cap >= 0)) return usage("--eval-cap must be 0 or more");
    if (!tune_eval_job(eval_job, eval_as ? eval_as : eval_job, opt.target, eval_cap, &err))
      return usage(err->message);
    return 0;
  }
  if (engine && strcmp(engine, "threads") == 0)
    opt.engine = TUNE_ENGINE_THREADS;
  else if (engine && strcmp(engine, "parallel") == 0)
    opt.engine = TUNE_ENGINE_PARALLEL;
  else if (engine && strcmp(engine, "slurm") == 0)
    opt.engine = TUNE_ENGINE_SLURM;
  else if (engine) {
    g_autofree char *m = g_strdup_printf("--engine must be threads, parallel or slurm, got '%s'", engine);
    return usage(m);
  }
  if (sshlogin && opt.engine != TUNE_ENGINE_PARALLEL) return usage("--sshlogin needs --engine parallel");
  if (!out && resume) out = g_strdup(resume);
  if (!out) return usage("-o DIR is required: where best.yaml and tune.csv go");
  if ((rounds_arg && !int_arg("rounds", rounds_arg, 0, 10000, &rounds)) ||
      (candidates_arg && !int_arg("candidates", candidates_arg, 1, 1000, &candidates)) ||
      (seed_arg && !int_arg("seed", seed_arg, 0, G_MAXUINT32, &seed)) ||
      (step_arg && !real_arg("step", step_arg, 0, 1, "in (0, 1]", &step)) ||
      (jobs_arg && !int_arg("jobs", jobs_arg, 1, 256, &jobs)) ||
      (evals_arg && !int_arg("evals", evals_arg, 1, 10000000, &evals)) ||
      (time_arg && !real_arg("time", time_arg, 0, 31536000, "in (0, 31536000]", &seconds)))
    return 2;
  if (evals != -1) opt.max_evals = (int)evals;
  opt.restarts = restarts;
  opt.screen = !knob_args && !no_screen; /* the schema's space: its techniques first */
  if ((evals != -1 || seconds != -1) && rounds == -1) opt.rounds = 10000; /* the budget ends it */
  if (rounds != -1) opt.rounds = (int)rounds;
  if (candidates != -1) opt.candidates = (int)candidates;
  if (seed != -1) opt.seed = (guint32)seed;
  if (step != -1) opt.step = step;
  opt.jobs = jobs != -1 ? (int)jobs : (int)g_get_num_processors();
  GPtrArray *knobs = g_ptr_array_new_with_free_func((GDestroyNotify)tune_knob_free);
  for (int i = 0; knob_args && knob_args[i]; i++) {
    TuneKnob *k = tune_knob_parse(knob_args[i], &err);
    if (!k) {
      g_ptr_array_unref(knobs);
      return usage(err->message);
    }
    g_ptr_array_add(knobs, k);
  }
  /* the jobs run this very tcc-tune, and find the rounds by absolute paths */
  g_autofree char *self = g_file_read_link("/proc/self/exe", NULL);
  if (!self) self = g_find_program_in_path(argv[0]);
  g_autofree char *workdir = g_canonicalize_filename(out, NULL);
  if (opt.engine != TUNE_ENGINE_THREADS && !self) return usage("--engine: cannot find this tcc-tune's path");
  /* the job lists are lines: a path with a line break would split one (and
   * what followed would run as a command); the Slurm script's log path is
   * a Slurm file name pattern */
  if (opt.engine != TUNE_ENGINE_THREADS) {
    if (!(opt.engine == TUNE_ENGINE_SLURM ? jobs_slurm_dir_ok("-o", workdir, &err) : jobs_name_ok("-o", workdir, &err)) ||
        !jobs_name_ok("the template", argv[1], &err) || !jobs_name_ok("this tcc-tune's path", self, &err)) {
      g_autofree char *m = g_strdup_printf("--engine: %s", err->message);
      return usage(m);
    }
  }
  opt.self = self;
  opt.workdir = workdir;
  opt.sshlogin = sshlogin;
  if (!check_out_dir(out, argv[1], resume)) {
    g_ptr_array_unref(knobs);
    return 2;
  }
  g_autoptr(Tune) t = tune_new(argv[1], knobs, &opt, &err); /* takes the knobs */
  if (!t) return fail(err);
  if (resume) {
    g_autofree char *log = g_build_filename(resume, "tune.csv", NULL);
    gsize len = 0;
    int errnum = 0;
    g_autofree char *text = file_read(log, TCC_DATA_MAX_BYTES, 0, &len, &errnum);
    if (!text) {
      g_autofree char *why = file_read_why(errnum, TCC_DATA_MAX_BYTES);
      fprintf(stderr, "tcc-tune: error: --resume: cannot read '%s': %s\n", log, why);
      return 2;
    }
    if (!tune_resume(t, log, text, &err)) return fail(err);
  }
  if (g_mkdir_with_parents(out, 0777) != 0) {
    int e = errno;
    fprintf(stderr, "tcc-tune: error: cannot create '%s': %s\n", out, g_strerror(e));
    return 2;
  }
  Progress pr = {out, !no_progress && isatty(STDERR_FILENO), FALSE, g_get_monotonic_time(), MAX(seconds, 0), FALSE};
  gboolean ran = tune_run(t, progress, &pr, &err);
  if (pr.draw) fputs("\r\033[K", stderr); /* the progress line goes */
  if (!ran) return fail(err);
  if (pr.failed) return 2;
  /* the best point's numerics, before it is written as the answer */
  g_autoptr(GError) verr = NULL;
  gboolean checked = tune_verify_best(t, 5, &verr);
  if (!checked && !(verr->domain == TUNE_ERROR && verr->code == TUNE_ERROR_USAGE)) return fail(verr);
  if (!write_both(t, out)) return 2;
  g_autofree char *best_path = g_build_filename(out, "best.yaml", NULL);
  g_autofree char *csv_path = g_build_filename(out, "tune.csv", NULL);
  const TunePoint *s = g_ptr_array_index(t->points, 0), *b = g_ptr_array_index(t->points, t->best);
  char sb[160], bb[160];
  describe(s, sb, sizeof sb);
  describe(b, bb, sizeof bb);
  printf("tcc-tune: %s of %s: %u point%s in %d round%s (seed %" PRIu32 ")\n", problem, argv[1], t->points->len,
         t->points->len == 1 ? "" : "s", t->rounds_run, t->rounds_run == 1 ? "" : "s", opt.seed);
  printf("start: %s\n", sb);
  printf("best:  %s, round %d point %d:", bb, b->round, b->candidate);
  int listed = 0; /* the schema's space: the knobs moved from the template */
  for (guint k = 0; k < t->knobs->len; k++) {
    const TuneKnob *kn = g_ptr_array_index(t->knobs, k);
    if (t->derived && b->idx[k] == s->idx[k]) continue;
    g_autofree char *v = tune_knob_value(kn, b->idx[k]);
    printf("%s %s=%s", listed++ ? "," : "", kn->path, v);
  }
  if (t->derived && listed == 0) printf(" the template's values");
  g_autofree char *qb = g_shell_quote(best_path);
  printf("\nwrote %s and %s; grade it (numerics too): tcc-grade %s\n", best_path, csv_path, qb);
  TuneCounts c;
  tune_counts(t, &c);
  printf("points: %d pass, %d slower than the best (not fitted further), %d over the power or area limit, "
         "%d refused by tcc-gen, %d errors, %d wrong numerics; %d with knobs set by technique moves\n",
         c.status[TUNE_PASS], c.status[TUNE_SLOWER], c.status[TUNE_POWER] + c.status[TUNE_AREA],
         c.status[TUNE_REFUSED], c.status[TUNE_ERROR_POINT], c.status[TUNE_WRONG], c.repaired);
  if (resume) printf("resumed: %d of the points from %s/tune.csv\n", t->resumed, resume);
  if (restarts) printf("restarts: %d\n", t->restarts);
  printf("stopped: %s\n", pr.timed_out ? "its time (--time)" : t->stopped ? t->stopped : "its rounds");
  if (checked) {
    static const uint64_t seeds[] = WL_GRADE_SEEDS;
    printf("checked: the best point's numerics pass on the grade seeds");
    for (guint i = 0; i < G_N_ELEMENTS(seeds); i++) printf("%s %" PRIu64, i ? "," : "", seeds[i]);
    printf("\n");
  } else {
    printf("checked: %s\n", verr->message);
  }
  return checked && b->m.status == TUNE_PASS ? 0 : 1;
}
