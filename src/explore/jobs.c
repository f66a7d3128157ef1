/* jobs.c - job lists on GNU parallel and Slurm (jobs.h). */
#include "jobs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

#include "text_escape.h"

G_DEFINE_QUARK(tcc-jobs-error-quark, jobs_error)

gboolean jobs_name_ok(const char *what, const char *name, GError **err) {
  for (const unsigned char *c = (const unsigned char *)name; *c; c++)
    if (*c < 0x20 || *c == 0x7f) {
      g_autofree char *q = text_escape(name);
      g_set_error(err, JOBS_ERROR, 1, "%s '%s': a name with a control character cannot go on a job line (rename it)",
                  what, q);
      return FALSE;
    }
  return TRUE;
}

gboolean jobs_slurm_dir_ok(const char *what, const char *dir, GError **err) {
  if (!jobs_name_ok(what, dir, err)) return FALSE;
  if (!strchr(dir, '\\')) return TRUE;
  g_set_error(err, JOBS_ERROR, 1, "%s '%s': a Slurm log path cannot hold a backslash (Slurm would leave %%A and %%a "
              "unreplaced; rename it)", what, dir);
  return FALSE;
}

/* Slurm file name pattern `path` + `pattern` as one argument of an
 * #SBATCH line: double-quoted, a backslash before each of \ " ' # of path
 * (sbatch's script parser takes '#' outside quotes, and in older versions
 * inside them too, as the start of a comment), each '%' of path doubled (a
 * pattern's literal percent); `pattern` (%A_%a.out) as it is. */
static char *sbatch_quote(const char *path, const char *pattern) {
  GString *q = g_string_new("\"");
  for (const char *c = path; *c; c++) {
    if (strchr("\\\"'#", *c)) g_string_append_c(q, '\\');
    g_string_append_c(q, *c);
    if (*c == '%') g_string_append_c(q, '%');
  }
  g_string_append_printf(q, "%s\"", pattern);
  return g_string_free(q, FALSE);
}

char *jobs_slurm_script(const char *tool, const char *dir, const char *jobs_txt, guint n, GError **err) {
  if (n == 0) { /* --array=0-(n - 1) would wrap around to 0-4294967295 */
    g_set_error(err, JOBS_ERROR, 1, "no jobs: a Slurm array needs at least one");
    return NULL;
  }
  if (!jobs_slurm_dir_ok("the job directory", dir, err) || !jobs_name_ok("the job list", jobs_txt, err))
    return NULL;
  g_autofree char *logs = g_build_filename(dir, "slurm", NULL);
  if (g_mkdir_with_parents(logs, 0777) != 0) {
    int e = errno;
    g_set_error(err, JOBS_ERROR, 1, "cannot create '%s': %s", logs, g_strerror(e));
    return NULL;
  }
  g_autofree char *qjobs = g_shell_quote(jobs_txt);
  g_autofree char *out = sbatch_quote(logs, G_DIR_SEPARATOR_S "%A_%a.out");
  return g_strdup_printf("#!/bin/sh\n"
                         "# %s: a Slurm job array over the %u jobs of %s (sbatch this file).\n"
                         "# Task N runs line N+1 of jobs.txt; a job whose result exists is skipped.\n"
                         "#SBATCH --job-name=%s\n"
                         "#SBATCH --array=0-%u\n"
                         "#SBATCH --output=%s\n"
                         "line=$(sed -n \"$((${SLURM_ARRAY_TASK_ID:?not run as a Slurm array task} + 1))p\" %s)\n"
                         "[ -n \"$line\" ] || { echo \"%s: no job line for task $SLURM_ARRAY_TASK_ID\" >&2; exit 2; }\n"
                         "eval \"exec $line\"\n",
                         tool, n, dir, tool, n - 1, out, qjobs, tool);
}

/* Run argv and wait; FALSE with its exit and the end of its standard
 * error when it cannot start or exits other than 0. */
static gboolean run(const char *const *argv, GError **err) {
  g_autofree char *out = NULL, *errs = NULL;
  int status = 0;
  g_autoptr(GError) e = NULL;
  if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &errs, &status, &e)) {
    g_set_error(err, JOBS_ERROR, 1, "cannot run %s: %s", argv[0], e->message);
    return FALSE;
  }
  if (!g_spawn_check_wait_status(status, &e)) {
    g_strstrip(errs);
    const char *last = strrchr(errs, '\n');
    g_set_error(err, JOBS_ERROR, 1, "%s failed (%s)%s%s", argv[0], e->message, *errs ? ": " : "",
                last ? last + 1 : errs);
    return FALSE;
  }
  return TRUE;
}

gboolean jobs_run_parallel(const char *jobs_txt, int jobs, const char *sshlogin, GError **err) {
  g_autofree char *j = g_strdup_printf("%d", jobs);
  const char *argv[] = {"parallel", "--will-cite", "--halt", "never", "-j", j, "-a", jobs_txt,
                        sshlogin ? "--sshlogin" : NULL, sshlogin, NULL};
  return run(argv, err);
}

gboolean jobs_run_slurm(const char *script, GError **err) {
  const char *argv[] = {"sbatch", "--wait", "--quiet", script, NULL};
  return run(argv, err);
}

void jobs_clock_text(double seconds, char *buf, size_t n) {
  long x = (long)(seconds + 0.5);
  if (x >= 3600)
    snprintf(buf, n, "%ld:%02ld:%02ld", x / 3600, x / 60 % 60, x % 60);
  else
    snprintf(buf, n, "%ld:%02ld", x / 60, x % 60);
}
