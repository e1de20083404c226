/* Atomic output files. See outfile.h. */
#include "cli/outfile.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
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
        if (saved_actions[i].sa_handler != SIG_IGN) sigaction(cleanup_signals[i], &sa, NULL);
    }
}

static void remove_cleanup(void)
{
    for (size_t i = 0; i < sizeof cleanup_signals / sizeof *cleanup_signals; i++)
        sigaction(cleanup_signals[i], &saved_actions[i], NULL);
    pending_tmp = NULL;
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
    char *tmp = NULL;
    if (asprintf(&tmp, "%s.tmp.%ld", path, (long)getpid()) < 0) {
        cli_error("out of memory");
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

int cli_out_close(cli_out *o, bool ok)
{
    if (!o->f)
        return ok ? CLI_EXIT_INPUT : CLI_EXIT_OK;
    if (!o->tmp) {
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
    int rc = CLI_EXIT_OK;
    int err = 0;
    if (ok) {
        if (fflush(o->f) != 0 || ferror(o->f) || fsync(fileno(o->f)) != 0)
            err = errno ? errno : EIO;
    }
    if (fclose(o->f) != 0 && ok && !err)
        err = errno ? errno : EIO;
    o->f = NULL;
    if (ok && !err && rename(o->tmp, o->path) != 0)
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
    return rc;
}
