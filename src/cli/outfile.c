/* Output files: atomic for regular files, written through otherwise. See
 * outfile.h. */
#include "cli/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

/* The temporary file to remove if a signal ends the process. Only this
 * pointer is read by the handler; it is set before the file exists and
 * cleared before the name is freed. */
static char *volatile pending_tmp;
static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
static struct sigaction saved_actions[sizeof cleanup_signals / sizeof *cleanup_signals];

static void on_signal(int sig)
{
    char *tmp = pending_tmp;
    if (tmp)
        unlink(tmp); /* async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

/* A signal the process inherited as ignored (nohup's SIGHUP, a shell's
 * SIGPIPE or SIGINT for background jobs) stays ignored: the caller asked
 * not to die of it, and the handler would turn it into a death. */
static void install_cleanup(char *tmp)
{
    pending_tmp = tmp;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof cleanup_signals / sizeof *cleanup_signals; i++) {
        sigaction(cleanup_signals[i], NULL, &saved_actions[i]);
        if (saved_actions[i].sa_handler != SIG_IGN)
            sigaction(cleanup_signals[i], &sa, NULL);
    }
}

static void remove_cleanup(void)
{
    for (size_t i = 0; i < sizeof cleanup_signals / sizeof *cleanup_signals; i++)
        sigaction(cleanup_signals[i], &saved_actions[i], NULL);
    pending_tmp = NULL;
}

/* Opens an existing file that is not a regular file (a character or block
 * device, a FIFO) for writing in place: no O_CREAT, so nothing is made if it
 * has gone meanwhile, and no O_TRUNC, which devices and FIFOs ignore. A
 * FIFO blocks here until a reader opens it, as `cmd > fifo` does. */
static int open_through(cli_out *o, const char *path)
{
    int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        cli_error("cannot write '%s': %s", path, strerror(err));
        return CLI_EXIT_INPUT;
    }
    o->f = f;
    o->path = path;
    return CLI_EXIT_OK;
}

/* The descriptor a name stands for: N for "/dev/fd/N", "/proc/self/fd/N"
 * or a link whose text is one of those ("/dev/stdout" is a link to
 * "/proc/self/fd/1"); -1 for any other name. Such a name is the process's
 * own open file, which may be a pipe, a terminal or a file opened for
 * appending ("weft ... -o /dev/stdout >> log"): only writing to that very
 * descriptor keeps its offset and mode, so it is dup()ed, never reopened
 * or replaced. */
static int fd_name(const char *path)
{
    char link[64];
    const char *n = NULL;
    if (strncmp(path, "/dev/fd/", 8) == 0)
        n = path + 8;
    else if (strncmp(path, "/proc/self/fd/", 14) == 0)
        n = path + 14;
    else {
        ssize_t len = readlink(path, link, sizeof link - 1);
        if (len <= 0)
            return -1;
        link[len] = '\0';
        if (strncmp(link, "/proc/self/fd/", 14) == 0)
            n = link + 14;
        else if (strncmp(link, "/dev/fd/", 8) == 0)
            n = link + 8;
        else
            return -1;
    }
    char *end;
    errno = 0;
    long fd = strtol(n, &end, 10);
    return *n >= '0' && *n <= '9' && !*end && !errno && fd <= INT_MAX ? (int)fd : -1;
}

/* Writes to a duplicate of descriptor fd (see fd_name). */
static int open_fd(cli_out *o, const char *path, int fd)
{
    int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    FILE *f = dup_fd >= 0 ? fdopen(dup_fd, "w") : NULL;
    if (!f) {
        int err = errno;
        if (dup_fd >= 0)
            close(dup_fd);
        cli_error("cannot write '%s': %s", path, strerror(err));
        return CLI_EXIT_INPUT;
    }
    o->f = f;
    o->path = path;
    return CLI_EXIT_OK;
}

/* Creates TARGET.tmp.PID, which cli_out_close renames over target. */
static int open_atomic(cli_out *o, const char *path, const char *target)
{
    char *tmp = NULL;
    if (asprintf(&tmp, "%s.tmp.%ld", target, (long)getpid()) < 0) {
        cli_error("out of memory naming the temporary file for '%s'", path);
        return CLI_EXIT_INPUT;
    }
    install_cleanup(tmp);
    /* "x": never write through a file someone else put at this name. */
    FILE *f = fopen(tmp, "wx");
    if (!f) {
        int err = errno;
        remove_cleanup();
        free(tmp);
        cli_error("cannot write '%s': %s", path, strerror(err));
        return CLI_EXIT_INPUT;
    }
    o->f = f;
    o->path = path;
    o->tmp = tmp;
    return CLI_EXIT_OK;
}

int cli_out_open(cli_out *o, const char *path)
{
    memset(o, 0, sizeof *o);
    if (!path || strcmp(path, "-") == 0) {
        o->f = stdout;
        return CLI_EXIT_OK;
    }
    if (path[0] == '\0') {
        cli_error("cannot write '': empty file name");
        return CLI_EXIT_INPUT;
    }
    int fd = fd_name(path);
    if (fd >= 0)
        return open_fd(o, path, fd);
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno != ENOENT) {
            cli_error("cannot write '%s': %s", path, strerror(errno));
            return CLI_EXIT_INPUT;
        }
        return open_atomic(o, path, path); /* a new file */
    }
    if (S_ISLNK(st.st_mode)) {
        /* A link stays a link: what it points at is written (atomically
         * when that is a regular file), as `cmd > link` would. */
        char *real = realpath(path, NULL);
        if (!real) {
            int err = errno;
            if (err == ENOENT)
                cli_error("cannot write '%s': a symbolic link to a file that does not exist", path);
            else
                cli_error("cannot write '%s': %s", path, strerror(err));
            return CLI_EXIT_INPUT;
        }
        int rc;
        if (stat(real, &st) != 0) {
            cli_error("cannot write '%s': %s", path, strerror(errno));
            rc = CLI_EXIT_INPUT;
        } else if (S_ISREG(st.st_mode)) {
            rc = open_atomic(o, path, real);
            if (rc == CLI_EXIT_OK) {
                o->target = real;
                real = NULL;
            }
        } else if (S_ISDIR(st.st_mode)) {
            cli_error("cannot write '%s': a symbolic link to a directory", path);
            rc = CLI_EXIT_INPUT;
        } else {
            rc = open_through(o, real);
            o->path = path;
        }
        free(real);
        return rc;
    }
    if (S_ISREG(st.st_mode))
        return open_atomic(o, path, path);
    if (S_ISDIR(st.st_mode)) {
        cli_error("cannot write '%s': %s", path, strerror(EISDIR));
        return CLI_EXIT_INPUT;
    }
    return open_through(o, path); /* a device, a FIFO, a socket (refused by open) */
}

/* Closes a file written in place (nothing to remove: what was written is
 * out). A write error is reported when ok; otherwise the caller reports
 * its own failure. */
static int close_through(cli_out *o, bool ok)
{
    int err = 0;
    errno = 0;
    if (fflush(o->f) != 0 || ferror(o->f))
        err = errno ? errno : EIO;
    if (fclose(o->f) != 0 && !err)
        err = errno ? errno : EIO;
    o->f = NULL;
    if (err && ok) {
        cli_error("cannot write '%s': %s", o->path, strerror(err));
        return CLI_EXIT_INPUT;
    }
    return CLI_EXIT_OK;
}

int cli_out_close(cli_out *o, bool ok)
{
    if (!o->f)
        return ok ? CLI_EXIT_INPUT : CLI_EXIT_OK;
    if (o->f == stdout) {
        /* stdout: main() reports write errors on it once at exit, but a
         * command that succeeds must not claim so if the data was lost. */
        o->f = NULL;
        if (ok && (fflush(stdout) != 0 || ferror(stdout))) {
            cli_error("cannot write to standard output: %s", strerror(errno ? errno : EIO));
            clearerr(stdout);
            return CLI_EXIT_INPUT;
        }
        return CLI_EXIT_OK;
    }
    if (!o->tmp)
        return close_through(o, ok);
    const char *final = o->target ? o->target : o->path;
    int rc = CLI_EXIT_OK;
    int err = 0;
    if (ok) {
        if (fflush(o->f) != 0 || ferror(o->f) || fsync(fileno(o->f)) != 0)
            err = errno ? errno : EIO;
    }
    if (fclose(o->f) != 0 && ok && !err)
        err = errno ? errno : EIO;
    o->f = NULL;
    if (ok && !err && rename(o->tmp, final) != 0)
        err = errno;
    if (!ok || err) {
        unlink(o->tmp);
        if (err) {
            cli_error("cannot write '%s': %s", o->path, strerror(err));
            rc = CLI_EXIT_INPUT;
        }
    }
    remove_cleanup();
    free(o->tmp);
    o->tmp = NULL;
    free(o->target);
    o->target = NULL;
    return rc;
}
