/* file_read.c - the bounded reader of every input (file_read.h). */
#include "file_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "program.h" /* sim_huge_hint */

/* A pipe or device is read in buffers that double from this size. */
#define FIRST_CAP ((gsize)64 << 10)

char *file_read(const char *file, gsize limit, gsize pad, gsize *len, int *errnum) {
  int fd = open(file, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *errnum = errno;
    return NULL;
  }
  struct stat st;
  char *buf = NULL;
  gsize cap, got = 0;
  if (fstat(fd, &st) != 0) {
    *errnum = errno;
    goto fail;
  }
  if (S_ISDIR(st.st_mode)) {
    *errnum = EISDIR;
    goto fail;
  }
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    if ((uintmax_t)st.st_size > limit) { /* refused by its size, unread */
      *errnum = FILE_READ_TOO_LARGE;
      goto fail;
    }
    cap = (gsize)st.st_size + 1; /* the last read() sees the end (or that it grew) */
  } else {
    cap = MIN(FIRST_CAP, limit + 1);
  }
  if (!(buf = g_try_malloc(cap + 1 + pad))) {
    *errnum = ENOMEM;
    goto fail;
  }
  sim_huge_hint(buf, cap + 1 + pad);
  for (;;) {
    if (got == cap) {
      if (cap > limit) break; /* limit + 1 bytes: over the limit, read no more */
      gsize more = MIN(2 * cap, limit + 1);
      char *grown = g_try_realloc(buf, more + 1 + pad);
      if (!grown) {
        *errnum = ENOMEM;
        goto fail;
      }
      buf = grown;
      cap = more;
    }
    ssize_t r = read(fd, buf + got, cap - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      *errnum = errno;
      goto fail;
    }
    if (r == 0) break;
    got += (gsize)r;
  }
  if (got > limit) {
    *errnum = FILE_READ_TOO_LARGE;
    goto fail;
  }
  close(fd);
  memset(buf + got, 0, 1 + pad);
  *len = got;
  return buf;
fail:
  g_free(buf);
  close(fd);
  return NULL;
}

char *file_read_why(int errnum, gsize limit) {
  if (errnum == FILE_READ_TOO_LARGE) return g_strdup_printf("larger than the limit of %" G_GSIZE_FORMAT " bytes", limit);
  return g_strdup(g_strerror(errnum));
}
