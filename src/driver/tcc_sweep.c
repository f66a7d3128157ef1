/* tcc_sweep.c - the tcc-sweep command: expand a plan into variants and grade
 * them on local threads, or write job lists for GNU parallel and Slurm;
 * merge the results (sweep.h; docs/tools.md, "tcc-sweep").
 *
 * Exit codes: 0 = every variant graded and passing, 1 = a variant fails a
 * constraint, has a grading error or no result yet, 2 = bad input (options,
 * the template, a variant that is not a valid plan) or an I/O error. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "jobs.h"
#include "plan_edit.h"
#include "sweep.h"
#include "stdout_check.h"



/* The bar, the elapsed time and, once a job is done, the ETA at the mean
 * pace so far (data: the start, g_get_monotonic_time). */
static void bar(guint done, guint total, gpointer data) {
  const gint64 *start = data;
  enum { WIDTH = 40 };
  int fill = total ? (int)((guint64)done * WIDTH / total) : WIDTH;
  char cells[WIDTH + 1], el[32], eta[32] = "-";
  memset(cells, '#', (size_t)fill);
  memset(cells + fill, ' ', (size_t)(WIDTH - fill));
  cells[WIDTH] = '\0';
  double elapsed = (double)(g_get_monotonic_time() - *start) / 1e6;
  jobs_clock_text(elapsed, el, sizeof el);
  if (done > 0) jobs_clock_text(elapsed / done * (total - done), eta, sizeof eta);
  fprintf(stderr, "\r\033[Ktcc-sweep [%s] %u/%u jobs, %s, ETA %s", cells, done, total, el, eta);
  if (done == total) fputs("\r\033[K", stderr);
  fflush(stderr);
}

/* This program's absolute path (for the job lines), or NULL. */
static char *self_path(void) { return g_file_read_link("/proc/self/exe", NULL); }

/* --grade, else tcc-grade beside this program, else on PATH. */
static char *find_grade(const char *given) {
  if (given) return g_strdup(given);
  g_autofree char *self = self_path();
  if (self) {
    g_autofree char *dir = g_path_get_dirname(self);
    char *beside = g_build_filename(dir, "tcc-grade", NULL);
    if (g_file_test(beside, G_FILE_TEST_IS_EXECUTABLE)) return beside;
    g_free(beside);
  }
  return g_find_program_in_path("tcc-grade");
}

static int usage(const char *msg) {
  fprintf(stderr, "tcc-sweep: error: %s\n", msg);
  return 2;
}

/* An error of sweep.c: with the prefix when it has no place of its own. */
static int fail(const GError *err) {
  if ((err->domain == SWEEP_ERROR && err->code != SWEEP_ERROR_PLACED) ||
      (err->domain == PLAN_EDIT_ERROR && err->code == PLAN_EDIT_ERROR_USAGE))
    return usage(err->message);
  fprintf(stderr, "%s\n", err->message);
  return 2;
}

/* The summary of a collected sweep: counts by status. */
static int collect(const char *dir, gboolean json) {
  g_autoptr(GError) err = NULL;
  g_autofree char *manifest = g_build_filename(dir, "sweep.json", NULL);
  g_autofree char *tune = g_build_filename(dir, "tune.csv", NULL);
  if (!g_file_test(manifest, G_FILE_TEST_EXISTS) && g_file_test(tune, G_FILE_TEST_EXISTS)) { /* a tcc-tune log */
    guint rows = 0, passing = 0;
    g_autofree char *table = sweep_collect_tune(dir, json, &rows, &passing, &err);
    if (!table) return fail(err);
    stdout_put(table);
    if (!stdout_check_now()) return 2; /* not the summary of a table that was lost */
    fprintf(stderr, "tcc-sweep: a tcc-tune directory: %u points, %u passing\n", rows, passing);
    return 0;
  }
  g_autoptr(Sweep) s = sweep_load(dir, &err);
  if (!s) return fail(err);
  guint bad = 0;
  g_autofree char *table = sweep_collect(s, json, &bad, &err);
  if (!table) return fail(err);
  stdout_put(table);
  if (!stdout_check_now()) return 2; /* not the summary of a table that was lost */
  fprintf(stderr, "tcc-sweep: %u variants, %u passing, %u failing, in error or without a result\n",
          s->variants->len, s->variants->len - bad, bad);
  return bad ? 1 : 0;
}

static int run_job(const char *name, const char *dir, const char *grade_opt) {
  g_autoptr(GError) err = NULL;
  g_autoptr(Sweep) s = sweep_load(dir, &err);
  if (!s) return fail(err);
  g_autofree char *grade = find_grade(grade_opt);
  if (!grade) return usage("cannot find tcc-grade (beside tcc-sweep or on PATH; or give --grade)");
  SweepJobState st;
  const char *status = NULL;
  if (!sweep_run_job(s, name, grade, &st, &status, &err)) return fail(err);
  if (st == SWEEP_SKIPPED)
    printf("%s: skipped (its result exists)\n", name);
  else
    printf("%s: %s\n", name, status);
  return 0;
}

int main(int argc, char **argv) {
  stdout_check_at_exit("tcc-sweep", 2); /* a report that was not written is an error */
  g_auto(GStrv) sets = NULL;
  g_autofree char *out = NULL, *format = NULL, *collect_dir = NULL, *job = NULL, *grade_opt = NULL, *problem = NULL;
  gboolean version = FALSE, emit_parallel = FALSE, emit_slurm = FALSE, no_progress = FALSE;
  int jobs = 0;
  GOptionEntry entries[] = {
      {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets,
       "sweep plan key KEY.PATH over the values V1,V2,... (repeatable: the variants are the product)",
       "KEY.PATH=V1,V2"},
      {"output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "the sweep directory (jobs, results)", "DIR"},
      {"problem", 0, 0, G_OPTION_ARG_STRING, &problem,
       "grade one problem of each variant, p1 or d1 (tcc-grade --problem; the other is not compiled)", "P"},
      {"jobs", 'j', 0, G_OPTION_ARG_INT, &jobs, "grade N variants at once here (default: the processors)", "N"},
      {"emit-parallel", 0, 0, G_OPTION_ARG_NONE, &emit_parallel,
       "do not run: print the GNU parallel command that runs DIR/jobs.txt", NULL},
      {"emit-slurm", 0, 0, G_OPTION_ARG_NONE, &emit_slurm,
       "do not run: write DIR/sweep.slurm, a Slurm array script, and print its sbatch command", NULL},
      {"collect", 0, 0, G_OPTION_ARG_FILENAME, &collect_dir,
       "merge the results of DIR into one table on standard output", "DIR"},
      {"format", 0, 0, G_OPTION_ARG_STRING, &format, "with --collect: csv (default) or json", "FORMAT"},
      {"run-job", 0, 0, G_OPTION_ARG_STRING, &job,
       "grade job NAME of the sweep directory given as argument (the job lines' command)", "NAME"},
      {"grade", 0, 0, G_OPTION_ARG_FILENAME, &grade_opt,
       "the tcc-grade to run (default: beside tcc-sweep, else on PATH)", "PATH"},
      {"no-progress", 0, 0, G_OPTION_ARG_NONE, &no_progress, "never draw the progress bar", NULL},
      {"version", 0, 0, G_OPTION_ARG_NONE, &version, "print the version", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  g_autoptr(GOptionContext) ctx =
      g_option_context_new("TEMPLATE.yaml --set KEY=V1,V2,... -o DIR | --collect DIR | --run-job NAME DIR");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_summary(
      ctx, "Expands a plan into its variants (the product of the --set lists), one job\n"
           "per variant, and grades them with tcc-grade --json on local threads, or\n"
           "writes the job list for GNU parallel (--emit-parallel) or a Slurm array\n"
           "script (--emit-slurm).  Each job writes DIR/results/NAME.json; a job whose\n"
           "result exists is skipped.  --collect DIR merges the results into one table\n"
           "(docs/tools.md, \"tcc-sweep\").\n"
           "Exit: 0 every variant passes, 1 one fails or has no result, 2 bad input.");
  g_autoptr(GError) err = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) return usage(err->message);
  if (version) {
    printf("%s (uses tcc-grade --json)\n", TCC_SWEEP_VERSION);
    return 0;
  }
  gboolean json = format && strcmp(format, "json") == 0;
  if (format && !json && strcmp(format, "csv") != 0) {
    g_autofree char *m = g_strdup_printf("--format must be csv or json, got '%s'", format);
    return usage(m);
  }
  if (format && !collect_dir) return usage("--format goes with --collect");
  if (collect_dir) {
    if (argc != 1 || sets || out || job || emit_parallel || emit_slurm || jobs || problem)
      return usage("--collect DIR takes no other argument or option but --format");
    return collect(collect_dir, json);
  }
  if (job) {
    if (argc != 2 || sets || out || emit_parallel || emit_slurm || jobs || problem)
      return usage("--run-job NAME takes the sweep directory as its one argument");
    return run_job(job, argv[1], grade_opt);
  }
  if (argc != 2) return usage("expected one template plan (see --help)");
  if (!out) return usage("-o DIR is required: where the jobs and results go");
  if (problem && strcmp(problem, "p1") != 0 && strcmp(problem, "d1") != 0) {
    g_autofree char *m = g_strdup_printf("--problem must be p1 or d1, got '%s'", problem);
    return usage(m);
  }
  if (jobs < 0 || jobs > 1024) return usage("--jobs must be 1..1024");
  if (jobs && (emit_parallel || emit_slurm)) return usage("--jobs runs the sweep here: not with --emit-*");
  g_autoptr(GPtrArray) parsed = g_ptr_array_new_with_free_func((GDestroyNotify)sweep_set_free);
  for (int i = 0; sets && sets[i]; i++) {
    SweepSet *s = sweep_set_parse(sets[i], &err);
    if (!s) return usage(err->message);
    g_ptr_array_add(parsed, s);
  }
  g_autofree char *self = self_path();
  if (!self) return usage("cannot find this program's path (/proc/self/exe)");
  g_autofree char *grade = find_grade(grade_opt);
  if (!grade) return usage("cannot find tcc-grade (beside tcc-sweep or on PATH; or give --grade)");
  /* the job lines carry this program's path and --grade's: one line each */
  if (!jobs_name_ok("this tcc-sweep's path", self, &err)) return usage(err->message);
  g_autofree char *qself = g_shell_quote(self);
  g_autofree char *qgrade = NULL;
  if (grade_opt) {
    g_autofree char *abs = g_canonicalize_filename(grade_opt, NULL);
    const char *path = g_path_is_absolute(grade_opt) || strchr(grade_opt, '/') ? abs : grade_opt;
    if (!jobs_name_ok("--grade", path, &err)) return usage(err->message);
    qgrade = g_shell_quote(path);
  }
  if (emit_slurm) { /* before anything is written */
    g_autofree char *dir = g_canonicalize_filename(out, NULL);
    if (!jobs_slurm_dir_ok("-o", dir, &err)) return usage(err->message);
  }
  g_autoptr(Sweep) s = sweep_expand(argv[1], parsed, out, qself, qgrade, problem, &err);
  if (!s) return fail(err);
  if (emit_parallel || emit_slurm) {
    g_autofree char *jobs_txt = g_build_filename(s->dir, "jobs.txt", NULL);
    g_autofree char *joblog = g_build_filename(s->dir, "joblog", NULL);
    g_autofree char *qj = g_shell_quote(jobs_txt), *ql = g_shell_quote(joblog);
    printf("tcc-sweep: %u jobs in %s\n", s->variants->len, jobs_txt);
    if (emit_parallel)
      printf("parallel --will-cite --joblog %s --resume -a %s\n", ql, qj);
    if (emit_slurm) {
      if (!sweep_write_slurm(s, &err)) return usage(err->message);
      g_autofree char *script = g_build_filename(s->dir, "sweep.slurm", NULL);
      g_autofree char *qs = g_shell_quote(script);
      printf("sbatch %s\n", qs);
    }
    g_autofree char *qdir = g_shell_quote(s->dir);
    printf("then: %s --collect %s\n", qself, qdir);
    return 0;
  }
  int threads = jobs ? jobs : (int)g_get_num_processors();
  gboolean draw = !no_progress && isatty(STDERR_FILENO);
  guint ran = 0, skipped = 0, bad = 0;
  gint64 start = g_get_monotonic_time();
  if (!sweep_run_all(s, grade, threads, draw ? bar : NULL, &start, &ran, &skipped, &err))
    return usage(err->message);
  g_autofree char *table = sweep_collect(s, FALSE, &bad, &err);
  if (!table) return usage(err->message);
  printf("tcc-sweep: %u jobs in %s: %u graded, %u skipped (result exists); %u passing, %u not\n",
         s->variants->len, s->dir, ran, skipped, s->variants->len - bad, bad);
  g_autofree char *qdir = g_shell_quote(s->dir);
  printf("table: %s --collect %s\n", qself, qdir);
  return bad ? 1 : 0;
}
