/* Output that is either complete or absent (-o FILE).
 *
 * What PATH is decides how it is written:
 * - nothing yet, or a regular file: cli_out_open creates PATH.tmp.PID next
 *   to PATH (same directory, so the final rename cannot cross file systems)
 *   and hands out its FILE *. cli_out_close(ok = true) flushes, fsyncs,
 *   closes and renames it over PATH in one step; with ok = false, or when
 *   any of those steps fails, it removes the temporary file instead and PATH
 *   is left as it was. If the process is killed by SIGINT, SIGTERM, SIGHUP
 *   or SIGPIPE while a temporary file is open, a signal handler removes it
 *   before dying. So a reader of PATH sees the old file or the whole new
 *   one, never half of it.
 * - a symbolic link: the link is kept and what it resolves to is written
 *   by these same rules (a regular target is replaced atomically through
 *   TARGET.tmp.PID in the target's directory). A link to nothing or to a
 *   directory is refused.
 * - anything else (a character or block device such as /dev/null or
 *   /dev/full, a FIFO): written through in place, never replaced, since
 *   renaming a file over it would destroy it. There is no atomicity to
 *   keep: a reader of a FIFO sees the bytes as they come. A write error
 *   ("No space left on device" on /dev/full) is still reported at close.
 * - a directory: refused ("Is a directory").
 * - the process's own descriptor, "/dev/stdout", "/dev/fd/N",
 *   "/proc/self/fd/N": written through a dup() of it, so a pipe, a terminal
 *   or a file the shell opened for appending get the bytes where writing
 *   to the descriptor would put them.
 * lstat and the open are two steps: a name that changes kind between them
 * is written by the rule of what it was.
 *
 * Without a path (NULL or "-") the output is stdout; closing it checks that
 * everything was written. One output may be open at a time.
 */
#ifndef WEFT_CLI_OUTFILE_H
#define WEFT_CLI_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

typedef struct cli_out {
    FILE *f;          /* where to write */
    const char *path; /* the final path, or NULL for stdout */
    char *tmp;        /* the temporary path (heap), or NULL when written in place */
    char *target;     /* what a symbolic link path resolves to (heap), or NULL */
} cli_out;

/* Returns CLI_EXIT_OK, or CLI_EXIT_INPUT after printing why the file cannot
 * be created ("weft: cannot write 'x.topo': No such file or directory"). */
int cli_out_open(cli_out *o, const char *path);
/* Commits (ok) or discards (!ok) the output; see above. Returns
 * CLI_EXIT_OK, or CLI_EXIT_INPUT after printing why it could not be
 * written. With ok == false it returns CLI_EXIT_OK once cleaned up (the
 * caller reports its own failure). */
int cli_out_close(cli_out *o, bool ok);

#endif
