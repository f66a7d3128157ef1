/* text_escape.h - a name or value that a command echoes in a one-line
 * diagnostic (or the compiler in an assembly comment), made safe for one
 * line (text_escape.c).  Shared by the simulator, the compiler and the
 * research tools: a user's file name or option value may hold a newline,
 * which would split the line in two (and, in a comment, start a line of
 * assembly). */
#ifndef TCC_TEXT_ESCAPE_H
#define TCC_TEXT_ESCAPE_H

/* A new string (g_free it): the control characters of `s` (below 0x20,
 * and DEL) as C escapes, \n, \t and \r, else \xNN; every other byte, UTF-8
 * included, as it is. */
char *text_escape(const char *s);

#endif
