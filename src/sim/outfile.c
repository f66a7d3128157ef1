/* outfile.c - output files that never lose a user's file (outfile.h):
 * a temporary file put in a regular target's place on commit, a device or
 * FIFO (or the process's own standard output) written directly, an input
 * refused. */
#define _GNU_SOURCE 1 /* renameat2, RENAME_EXCHANGE */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

G_DEFINE_QUARK(tcc-outfile-error-quark, outfile_error)

struct OutFile {
  FILE *f;
  char *target;       /* the file the commit replaces (links resolved)    */
  char *tmp;          /* the temporary file beside it; NULL: written directly */
  gboolean replaces;  /* the target existed when opened                   */
  OutFileFlags flags;
  int write_errno;    /* a failed write's errno seen by outfile_write     */
  int slot;           /* in `pending`, or -1                              */
};

/* ---- temporary files removed on a fatal signal --------------------------- */

/* The temporary files open now, for the handler: a slot holds a path that
 * stays allocated while it is there (it is cleared before the path is
 * freed; a signal handled on another thread in that instant is the one
 * gap).  More at once than slots (a sweep on hundreds of threads) are
 * simply not cleaned on a signal. */
enum { PENDING_MAX = 256 };
static char *volatile pending[PENDING_MAX];
static GMutex pending_lock;

static void on_fatal_signal(int sig) {
  int saved = errno;
  for (int i = 0; i < PENDING_MAX; i++) {
    const char *p = pending[i];
    if (p) unlink(p);
  }
  errno = saved;
  /* SA_RESETHAND made the action the default again: the signal, blocked
   * while this handler runs, ends the process once it returns */
  raise(sig);
}

static gpointer install_handlers(gpointer data) {
  (void)data;
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  for (size_t i = 0; i < G_N_ELEMENTS(sigs); i++) {
    struct sigaction old;
    if (sigaction(sigs[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
      continue; /* ignored (nohup) or the program's own: left alone */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    sigaction(sigs[i], &sa, NULL);
  }
  return NULL;
}

static int pending_add(char *path) {
  static GOnce once = G_ONCE_INIT;
  g_once(&once, install_handlers, NULL);
  int slot = -1;
  g_mutex_lock(&pending_lock);
  for (int i = 0; i < PENDING_MAX && slot < 0; i++)
    if (!pending[i]) {
      pending[i] = path;
      slot = i;
    }
  g_mutex_unlock(&pending_lock);
  return slot;
}

static void pending_remove(int slot) {
  if (slot < 0) return;
  g_mutex_lock(&pending_lock);
  pending[slot] = NULL;
  g_mutex_unlock(&pending_lock);
}

/* ---- opening ------------------------------------------------------------- */

static gboolean io_error(GError **err, int e) {
  g_set_error_literal(err, G_FILE_ERROR, g_file_error_from_errno(e), g_strerror(e));
  return FALSE;
}

gboolean outfile_is_input(const char *path, const char *const *inputs, const char **which) {
  GStatBuf out, in;
  if (!inputs || g_stat(path, &out) != 0) return FALSE;
  for (int i = 0; inputs[i]; i++)
    if (g_stat(inputs[i], &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
      if (which) *which = inputs[i];
      return TRUE;
    }
  return FALSE;
}

/* The file a symbolic link (or a chain of them) points to, as a path
 * (relative links taken from their own directory); `path` itself when it
 * is not a link.  NULL with errno ELOOP for a chain too long. */
static char *resolve_links(const char *path) {
  char *p = g_strdup(path);
  for (int hops = 0; hops < 40; hops++) {
    GStatBuf st;
    if (g_lstat(p, &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    char *to = g_file_read_link(p, NULL);
    if (!to) return p; /* the rename then fails, or replaces the link: as for any file */
    if (!g_path_is_absolute(to)) {
      g_autofree char *dir = g_path_get_dirname(p);
      char *j = g_build_filename(dir, to, NULL);
      g_free(to);
      to = j;
    }
    g_free(p);
    p = to;
  }
  g_free(p);
  errno = ELOOP;
  return NULL;
}

/* A device, a FIFO, a socket: opened as it is, never created or truncated.
 * *regular when it turned out to be a regular file by the time it opened
 * (then closed: the caller takes the regular file's way). */
static int open_special(const char *path, gboolean *regular) {
  *regular = FALSE;
  int fd;
  do fd = g_open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY, 0);
  while (fd < 0 && errno == EINTR);
  GStatBuf st;
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    close(fd);
    *regular = TRUE;
    return -1;
  }
  return fd;
}

/* A regular file that is already this process's standard output or error
 * (`-o /dev/stdout >out.asm`): a new descriptor of it, written where that
 * stream is, after what it holds; -1 when it is neither. */
static int own_stream(const GStatBuf *st) {
  for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++) {
    GStatBuf s;
    if (fstat(fd, &s) == 0 && s.st_dev == st->st_dev && s.st_ino == st->st_ino) {
      if (fd == STDOUT_FILENO) fflush(stdout);
      return fcntl(fd, F_DUPFD_CLOEXEC, 3);
    }
  }
  return -1;
}

OutFile *outfile_open(const char *path, const char *const *inputs, OutFileFlags flags, GError **err) {
  const char *which = NULL;
  if (outfile_is_input(path, inputs, &which)) {
    g_set_error_literal(err, OUTFILE_ERROR, OUTFILE_ERROR_INPUT, which);
    return NULL;
  }
  if (!*path) {
    io_error(err, ENOENT);
    return NULL;
  }
  GStatBuf st;
  gboolean exists = g_stat(path, &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    io_error(err, EISDIR);
    return NULL;
  }
  OutFile *o = g_new0(OutFile, 1);
  o->flags = flags;
  o->slot = -1;
  int fd = -1;
  gboolean regular = !exists || S_ISREG(st.st_mode);
  if (exists && regular && (fd = own_stream(&st)) >= 0) regular = FALSE; /* written through, as a device */
  else if (!regular) {
    fd = open_special(path, &regular);
    if (fd < 0 && !regular) {
      io_error(err, errno);
      g_free(o);
      return NULL;
    }
    if (regular) exists = g_stat(path, &st) == 0;
  }
  if (regular) {
    o->target = resolve_links(path);
    if (!o->target) {
      io_error(err, errno);
      g_free(o);
      return NULL;
    }
    /* the file's own write permission is honoured, as by open(2): a
     * read-only file is not replaced because its directory is writable */
    if (exists && access(o->target, W_OK) != 0 && errno != ENOENT) {
      io_error(err, errno);
      g_free(o->target);
      g_free(o);
      return NULL;
    }
    g_autofree char *base = g_path_get_basename(o->target);
    if (strlen(base) > 200) { /* FILE.XXXXXX would pass NAME_MAX */
      g_autofree char *dir = g_path_get_dirname(o->target);
      o->tmp = g_build_filename(dir, ".tcc-out.XXXXXX", NULL);
    } else {
      o->tmp = g_strconcat(o->target, ".XXXXXX", NULL);
    }
    fd = g_mkstemp_full(o->tmp, O_WRONLY | O_CLOEXEC, 0666);
    if (fd < 0) {
      io_error(err, errno);
      g_free(o->tmp);
      g_free(o->target);
      g_free(o);
      return NULL;
    }
    o->slot = pending_add(o->tmp);
    o->replaces = exists;
    if (exists) { /* the replacement keeps the file's permissions (and owner, where allowed) */
      if ((st.st_uid != geteuid() || st.st_gid != getegid()) && fchown(fd, st.st_uid, st.st_gid) != 0) {
        /* not ours to give away: the new file is the writer's */
      }
      fchmod(fd, st.st_mode & 07777);
    }
  }
  o->f = fdopen(fd, "w");
  if (!o->f) {
    int e = errno;
    close(fd);
    outfile_abandon(o);
    io_error(err, e);
    return NULL;
  }
  return o;
}

FILE *outfile_stream(OutFile *o) {
  return o->f;
}

const char *outfile_temp_path(const OutFile *o) {
  return o->tmp;
}

/* ---- committing ---------------------------------------------------------- */

static void release(OutFile *o, gboolean remove_tmp) {
  if (o->tmp) {
    if (remove_tmp) g_unlink(o->tmp);
    pending_remove(o->slot);
  }
  g_free(o->tmp);
  g_free(o->target);
  g_free(o);
}

/* The temporary file renamed to the target; an errno, or 0.  A target that
 * exists is swapped with it (RENAME_EXCHANGE, atomic as a rename is), and
 * the old text, now under the temporary name, removed: renaming over an
 * existing file makes ext4 start writing the new one out at once
 * (auto_da_alloc), 7-15 ms for an 18 MB program on this VM, against ~1 ms
 * for the swap and the unlink; where the file system cannot swap, or the
 * target has gone, a plain rename. */
static int put_in_place(OutFile *o) {
#ifdef RENAME_EXCHANGE
  if (o->replaces && renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->target, RENAME_EXCHANGE) == 0) {
    if (g_unlink(o->tmp) == 0) return 0;
    /* what was swapped out is not a file to remove (a directory made
     * there meanwhile): swapped back, and the new text not put in place */
    int e = errno;
    renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->target, RENAME_EXCHANGE);
    return e;
  }
#endif
  return g_rename(o->tmp, o->target) == 0 ? 0 : errno;
}

gboolean outfile_commit(OutFile *o, GError **err) {
  errno = 0;
  int e = fflush(o->f) != 0 || ferror(o->f) ? (errno ? errno : o->write_errno ? o->write_errno : EIO) : 0;
  if (!e && o->tmp && (o->flags & OUTFILE_SYNC) && fsync(fileno(o->f)) != 0) e = errno;
  errno = 0;
  if (fclose(o->f) != 0 && !e) e = errno ? errno : EIO;
  o->f = NULL;
  if (!e && o->tmp) e = put_in_place(o);
  release(o, e != 0);
  return e ? io_error(err, e) : TRUE;
}

void outfile_abandon(OutFile *o) {
  if (!o) return;
  if (o->f) fclose(o->f);
  release(o, TRUE);
}

gboolean outfile_write(const char *path, const char *text, gssize len, const char *const *inputs, OutFileFlags flags,
                       GError **err) {
  OutFile *o = outfile_open(path, inputs, flags, err);
  if (!o) return FALSE;
  gsize n = len < 0 ? strlen(text) : (gsize)len;
  errno = 0;
  if (n && fwrite(text, 1, n, o->f) != n) o->write_errno = errno; /* the stream keeps its error: commit says it */
  return outfile_commit(o, err);
}
