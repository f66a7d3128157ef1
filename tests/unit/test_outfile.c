/* test_outfile.c - how every tool writes an output file (outfile.h;
 * docs/tools.md, "Output files"): a regular file replaced only on commit,
 * its permissions kept; a link's file replaced, the link kept; a device or
 * FIFO written directly and never removed; a directory or an input
 * refused; a failed write or a fatal signal leaving the old file and no
 * temporary one. */
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "outfile.h"
#include "tests.h"

static char *tmp_dir(void) {
  char *d = g_dir_make_tmp("tcc-outfile-XXXXXX", NULL);
  ck_assert(d != NULL);
  return d;
}

static int by_name(gconstpointer a, gconstpointer b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in `dir`, sorted, space-separated ("" when empty). */
static char *listing(const char *dir) {
  GDir *d = g_dir_open(dir, 0, NULL);
  ck_assert(d != NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  const char *n;
  while ((n = g_dir_read_name(d))) g_ptr_array_add(names, g_strdup(n));
  g_dir_close(d);
  g_ptr_array_sort(names, by_name);
  g_ptr_array_add(names, NULL);
  return g_strjoinv(" ", (char **)names->pdata);
}

static char *contents(const char *file) {
  char *text = NULL;
  ck_assert_msg(g_file_get_contents(file, &text, NULL, NULL), "cannot read %s", file);
  return text;
}

static void put(const char *file, const char *text) {
  ck_assert(g_file_set_contents(file, text, -1, NULL));
}

static void rm_tree(const char *dir) {
  GDir *d = g_dir_open(dir, 0, NULL);
  const char *n;
  while (d && (n = g_dir_read_name(d))) {
    g_autofree char *p = g_build_filename(dir, n, NULL);
    if (g_file_test(p, G_FILE_TEST_IS_DIR) && !g_file_test(p, G_FILE_TEST_IS_SYMLINK))
      rm_tree(p);
    else
      g_remove(p);
  }
  if (d) g_dir_close(d);
  g_rmdir(dir);
}

/* A new file: nothing at FILE until the commit, only FILE after; an
 * abandoned one leaves nothing. */
START_TEST(test_outfile_new) {
  g_autofree char *dir = tmp_dir();
  g_autofree char *f = g_build_filename(dir, "a.txt", NULL);
  g_autoptr(GError) err = NULL;
  OutFile *o = outfile_open(f, NULL, OUTFILE_DEFAULT, &err);
  ck_assert_msg(o != NULL, "%s", err ? err->message : "");
  ck_assert(outfile_temp_path(o) != NULL);
  ck_assert(!g_file_test(f, G_FILE_TEST_EXISTS));
  fputs("one\n", outfile_stream(o));
  ck_assert(outfile_commit(o, &err));
  g_autofree char *got = contents(f), *ls = listing(dir);
  ck_assert_str_eq(got, "one\n");
  ck_assert_str_eq(ls, "a.txt");
  g_autofree char *g = g_build_filename(dir, "b.txt", NULL);
  o = outfile_open(g, NULL, OUTFILE_SYNC, &err);
  fputs("never\n", outfile_stream(o));
  outfile_abandon(o);
  g_autofree char *ls2 = listing(dir);
  ck_assert_str_eq(ls2, "a.txt");
  /* outfile_write, synced */
  ck_assert(outfile_write(g, "two\n", -1, NULL, OUTFILE_SYNC, &err));
  g_autofree char *got2 = contents(g);
  ck_assert_str_eq(got2, "two\n");
  rm_tree(dir);
}
END_TEST

/* An existing file: kept whole until the commit and after an abandon;
 * replaced with its permission bits. */
START_TEST(test_outfile_replace) {
  g_autofree char *dir = tmp_dir();
  g_autofree char *f = g_build_filename(dir, "a.txt", NULL);
  put(f, "old\n");
  ck_assert(g_chmod(f, 0640) == 0);
  g_autoptr(GError) err = NULL;
  OutFile *o = outfile_open(f, NULL, OUTFILE_DEFAULT, &err);
  fputs("new\n", outfile_stream(o));
  fflush(outfile_stream(o));
  g_autofree char *mid = contents(f);
  ck_assert_str_eq(mid, "old\n");
  outfile_abandon(o);
  g_autofree char *kept = contents(f), *ls = listing(dir);
  ck_assert_str_eq(kept, "old\n");
  ck_assert_str_eq(ls, "a.txt");
  ck_assert(outfile_write(f, "new\n", -1, NULL, OUTFILE_DEFAULT, &err));
  g_autofree char *got = contents(f), *ls2 = listing(dir);
  ck_assert_str_eq(got, "new\n");
  ck_assert_str_eq(ls2, "a.txt");
  GStatBuf st;
  ck_assert(g_stat(f, &st) == 0 && (st.st_mode & 07777) == 0640);
  rm_tree(dir);
}
END_TEST

/* A link (a chain, relative, into another directory): the file at its end
 * replaced beside itself, every link kept; a dangling link's file made. */
START_TEST(test_outfile_links) {
  g_autofree char *dir = tmp_dir();
  g_autofree char *sub = g_build_filename(dir, "sub", NULL);
  ck_assert(g_mkdir(sub, 0755) == 0);
  g_autofree char *real = g_build_filename(sub, "real.txt", NULL);
  g_autofree char *l1 = g_build_filename(sub, "l1", NULL);
  g_autofree char *l2 = g_build_filename(dir, "l2", NULL);
  put(real, "old\n");
  ck_assert(symlink("real.txt", l1) == 0);
  ck_assert(symlink("sub/l1", l2) == 0);
  g_autoptr(GError) err = NULL;
  ck_assert_msg(outfile_write(l2, "new\n", -1, NULL, OUTFILE_DEFAULT, &err), "%s", err ? err->message : "");
  g_autofree char *got = contents(real), *ls = listing(dir), *ls_sub = listing(sub);
  ck_assert_str_eq(got, "new\n");
  ck_assert_str_eq(ls, "l2 sub");
  ck_assert_str_eq(ls_sub, "l1 real.txt");
  ck_assert(g_file_test(l1, G_FILE_TEST_IS_SYMLINK) && g_file_test(l2, G_FILE_TEST_IS_SYMLINK));
  /* a dangling link: the file it names is made */
  g_autofree char *dang = g_build_filename(dir, "dang", NULL), *made = g_build_filename(sub, "made.txt", NULL);
  ck_assert(symlink("sub/made.txt", dang) == 0);
  ck_assert(outfile_write(dang, "made\n", -1, NULL, OUTFILE_DEFAULT, &err));
  g_autofree char *m = contents(made);
  ck_assert_str_eq(m, "made\n");
  ck_assert(g_file_test(dang, G_FILE_TEST_IS_SYMLINK));
  /* a loop of links: ELOOP, nothing made */
  g_autofree char *la = g_build_filename(dir, "la", NULL), *lb = g_build_filename(dir, "lb", NULL);
  ck_assert(symlink("lb", la) == 0 && symlink("la", lb) == 0);
  ck_assert(!outfile_write(la, "x", -1, NULL, OUTFILE_DEFAULT, &err));
  ck_assert(g_error_matches(err, G_FILE_ERROR, G_FILE_ERROR_LOOP));
  g_clear_error(&err);
  g_autofree char *ls2 = listing(dir);
  ck_assert_str_eq(ls2, "dang l2 la lb sub");
  rm_tree(dir);
}
END_TEST

/* Refused: an input (by name, a hard link, a link to it), a directory, a
 * missing directory; nothing made, the input untouched. */
START_TEST(test_outfile_refused) {
  g_autofree char *dir = tmp_dir();
  g_autofree char *in = g_build_filename(dir, "in.yaml", NULL);
  g_autofree char *hard = g_build_filename(dir, "hard.asm", NULL);
  g_autofree char *soft = g_build_filename(dir, "soft.asm", NULL);
  put(in, "input\n");
  ck_assert(link(in, hard) == 0);
  ck_assert(symlink("in.yaml", soft) == 0);
  const char *inputs[] = {"/nonexistent/x", in, NULL};
  const char *names[] = {in, hard, soft};
  for (int i = 0; i < 3; i++) {
    g_autoptr(GError) err = NULL;
    ck_assert(outfile_open(names[i], inputs, OUTFILE_DEFAULT, &err) == NULL);
    ck_assert(g_error_matches(err, OUTFILE_ERROR, OUTFILE_ERROR_INPUT));
    ck_assert_str_eq(err->message, in);
    const char *which = NULL;
    ck_assert(outfile_is_input(names[i], inputs, &which) && which == in);
  }
  ck_assert(!outfile_is_input(in, NULL, NULL));
  g_autofree char *got = contents(in), *ls = listing(dir);
  ck_assert_str_eq(got, "input\n");
  ck_assert_str_eq(ls, "hard.asm in.yaml soft.asm");
  g_autoptr(GError) err = NULL;
  ck_assert(outfile_open(dir, NULL, OUTFILE_DEFAULT, &err) == NULL);
  ck_assert_str_eq(err->message, "Is a directory");
  g_clear_error(&err);
  g_autofree char *miss = g_build_filename(dir, "no", "x.txt", NULL);
  ck_assert(outfile_open(miss, NULL, OUTFILE_DEFAULT, &err) == NULL);
  ck_assert(g_error_matches(err, G_FILE_ERROR, G_FILE_ERROR_NOENT));
  ck_assert_str_eq(err->message, "No such file or directory");
  g_clear_error(&err);
  ck_assert(outfile_open("", NULL, OUTFILE_DEFAULT, &err) == NULL);
  g_clear_error(&err);
  g_autofree char *ls2 = listing(dir);
  ck_assert_str_eq(ls2, "hard.asm in.yaml soft.asm");
  rm_tree(dir);
}
END_TEST

/* A device and a FIFO: written directly, never removed, even when
 * abandoned; a failed write (/dev/full) is the commit's error. */
START_TEST(test_outfile_special) {
  g_autoptr(GError) err = NULL;
  OutFile *o = outfile_open("/dev/null", NULL, OUTFILE_SYNC, &err);
  ck_assert(o != NULL && outfile_temp_path(o) == NULL);
  fputs("x", outfile_stream(o));
  outfile_abandon(o);
  GStatBuf st;
  ck_assert(g_stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
  ck_assert(outfile_write("/dev/null", "x", 1, NULL, OUTFILE_DEFAULT, &err));
  ck_assert(g_stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
  if (access("/dev/full", W_OK) == 0) {
    ck_assert(!outfile_write("/dev/full", "x", 1, NULL, OUTFILE_DEFAULT, &err));
    ck_assert_str_eq(err->message, "No space left on device");
    g_clear_error(&err);
    ck_assert(g_stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode));
  }
  g_autofree char *dir = tmp_dir();
  g_autofree char *fifo = g_build_filename(dir, "fifo", NULL);
  ck_assert(mkfifo(fifo, 0600) == 0);
  int rd = open(fifo, O_RDONLY | O_NONBLOCK);
  ck_assert(rd >= 0);
  ck_assert(outfile_write(fifo, "fifo", 4, NULL, OUTFILE_DEFAULT, &err));
  char buf[8] = {0};
  ck_assert_int_eq(read(rd, buf, sizeof buf), 4);
  ck_assert_str_eq(buf, "fifo");
  o = outfile_open(fifo, NULL, OUTFILE_DEFAULT, &err);
  ck_assert(o != NULL);
  outfile_abandon(o);
  close(rd);
  ck_assert(g_stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
  g_autofree char *ls = listing(dir);
  ck_assert_str_eq(ls, "fifo");
  rm_tree(dir);
}
END_TEST

/* A name too long for FILE.XXXXXX: the temporary file gets a short name
 * of its own. */
START_TEST(test_outfile_long_name) {
  g_autofree char *dir = tmp_dir();
  char base[251];
  memset(base, 'n', 250);
  base[250] = '\0';
  g_autofree char *f = g_build_filename(dir, base, NULL);
  g_autoptr(GError) err = NULL;
  ck_assert_msg(outfile_write(f, "long\n", -1, NULL, OUTFILE_DEFAULT, &err), "%s", err ? err->message : "");
  ck_assert(outfile_write(f, "longer\n", -1, NULL, OUTFILE_DEFAULT, &err));
  g_autofree char *got = contents(f), *ls = listing(dir);
  ck_assert_str_eq(got, "longer\n");
  ck_assert_str_eq(ls, base);
  rm_tree(dir);
}
END_TEST

/* A process ended by SIGHUP while its output is open: the old file stays,
 * its temporary file goes.  (SIGHUP: this runner handles SIGINT and
 * SIGTERM itself, and outfile leaves a program's own handlers alone; not
 * where SIGHUP is ignored, nohup.) */
START_TEST(test_outfile_signal) {
  struct sigaction hup;
  ck_assert(sigaction(SIGHUP, NULL, &hup) == 0);
  if (!(hup.sa_flags & SA_SIGINFO) && hup.sa_handler == SIG_IGN) {
    fprintf(stderr, "test_outfile_signal: skipped, SIGHUP is ignored here\n");
    return;
  }
  g_autofree char *dir = tmp_dir();
  g_autofree char *f = g_build_filename(dir, "a.txt", NULL);
  put(f, "old\n");
  fflush(NULL);
  pid_t pid = fork();
  ck_assert(pid >= 0);
  if (pid == 0) {
    OutFile *o = outfile_open(f, NULL, OUTFILE_DEFAULT, NULL);
    if (!o) _exit(3);
    fputs("half", outfile_stream(o));
    fflush(outfile_stream(o));
    kill(getpid(), SIGHUP);
    _exit(4); /* not reached */
  }
  int status = 0;
  ck_assert(waitpid(pid, &status, 0) == pid);
  ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGHUP, "status %d", status);
  g_autofree char *got = contents(f), *ls = listing(dir);
  ck_assert_str_eq(got, "old\n");
  ck_assert_str_eq(ls, "a.txt");
  rm_tree(dir);
}
END_TEST

Suite *suite_outfile(void) {
  Suite *s = suite_create("outfile");
  TCase *tc = tcase_create("outfile");
  tcase_add_test(tc, test_outfile_new);
  tcase_add_test(tc, test_outfile_replace);
  tcase_add_test(tc, test_outfile_links);
  tcase_add_test(tc, test_outfile_refused);
  tcase_add_test(tc, test_outfile_special);
  tcase_add_test(tc, test_outfile_long_name);
  tcase_add_test(tc, test_outfile_signal);
  suite_add_tcase(s, tc);
  return s;
}
