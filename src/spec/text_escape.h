/* text_escape.h - a name or value that a command echoes in a one-line
 * diagnostic (or the compiler in an assembly comment, tcc-sweep and tcc-tune
 * in a YAML comment), made safe for one line (text_escape.c).  Shared by the simulator, the compiler and the
 * research tools: a user's file name or option value may hold a newline,
 * which would split the line in two (and, in a comment, start a line of
 * assembly or of YAML). */
#ifndef TCC_TEXT_ESCAPE_H
#define TCC_TEXT_ESCAPE_H

/* A new string (g_free it): the control characters of `s` (below 0x20,
 * and DEL) as C escapes, \n, \t and \r, else \xNN; a byte that is not
 * part of a valid UTF-8 character as \xNN; the C1 controls (U+0080 to
 * U+009F, NEL among them), the line and paragraph separators (U+2028,
 * U+2029) and U+FFFE, U+FFFF as \uNNNN, since YAML ends a line (a comment)
 * at NEL, U+2028 and U+2029 too and libyaml refuses the last two anywhere;
 * every other character as it is.  The result is valid UTF-8
 * and one line for every reader the tools write for (a terminal, the
 * assembler, a shell, libyaml). */
char *text_escape(const char *s);

#endif
