/* jobs.h - the job lists the research tools hand to an engine: a file of
 * shell command lines (jobs.txt), run by GNU parallel (-a; on several
 * machines with --sshlogin) or as a Slurm job array whose task N runs line
 * N+1.  tcc-sweep writes them for the user to run; tcc-tune runs each
 * round's points through them (docs/tools.md). */
#ifndef TCC_JOBS_H
#define TCC_JOBS_H

#include <glib.h>

/* A progress line's time: "1:05", or "2:03:07" past an hour (seconds
 * rounded), into buf[0..n). */
void jobs_clock_text(double seconds, char *buf, size_t n);

/* TRUE when `name` (a path the job lines or the Slurm script carry: the
 * directory, tcc-grade, the tool itself) can be written on one line: it has
 * no control character (a newline would split a job line in two, and what
 * followed would run as a command of its own).  Else FALSE with *err:
 * "WHAT 'NAME': a name with a control character cannot go on a job line
 * (rename it)", NAME escaped (text_escape.h). */
gboolean jobs_name_ok(const char *what, const char *name, GError **err);

/* jobs_name_ok, and no backslash: the Slurm script's log path (DIR/slurm/
 * %A_%a.out) is a Slurm file name pattern, which a backslash turns into a
 * literal name (every task would log to one file). */
gboolean jobs_slurm_dir_ok(const char *what, const char *dir, GError **err);

/* The Slurm array script over the `n` lines of `jobs_txt`, its logs in
 * DIR/slurm/ (created): `tool` names it in the job name and comments.
 * The log path goes on an `#SBATCH --output` line, double-quoted with
 * sbatch's escapes (a backslash before `\`, `"`, `'` and `#`) and `%`
 * written `%%` (Slurm's file name patterns).  NULL with *err for n = 0 (an
 * array is never emitted without a job), for a DIR or jobs_txt that
 * jobs_slurm_dir_ok refuses. */
char *jobs_slurm_script(const char *tool, const char *dir, const char *jobs_txt, guint n, GError **err);

/* Run the `n` lines of `jobs_txt` and wait for them: with GNU parallel
 * (`jobs` at once per machine; `sshlogin` as parallel's --sshlogin, or
 * NULL: here), or (`slurm`) as the array script `script` through
 * `sbatch --wait`.  FALSE with *err ("cannot run ...: why") when the
 * engine cannot be started or fails as a whole; a job that fails is its
 * own result's business. */
gboolean jobs_run_parallel(const char *jobs_txt, int jobs, const char *sshlogin, GError **err);
gboolean jobs_run_slurm(const char *script, GError **err);

#define JOBS_ERROR (jobs_error_quark())
GQuark jobs_error_quark(void);

#endif
