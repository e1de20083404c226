/* The weft command. Reads the environment (WEFT_LOG, WEFT_THREADS) here and
 * nowhere else, then dispatches through the command table (commands.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "weft/threads.h"

int main(int argc, char **argv)
{
    /* The flag --log, read later, overrides the environment. */
    const char *env = getenv("WEFT_LOG");
    if (env && env[0] && !cli_log_level_set(env)) {
        cli_error("unknown log level '%s' in WEFT_LOG (%s)", env, CLI_LOG_LEVELS);
        return CLI_EXIT_USAGE;
    }
    env = getenv("WEFT_THREADS");
    if (env && env[0]) {
        char *end;
        errno = 0;
        unsigned long n = strtoul(env, &end, 10);
        if (errno || *end || env[0] == '-' || n < 1 || n > WEFT_THREADS_MAX) {
            cli_error("WEFT_THREADS '%s': a whole number of threads from 1 to %d", env,
                      WEFT_THREADS_MAX);
            return CLI_EXIT_USAGE;
        }
        weft_threads_set((unsigned)n);
    }
    int rc = cli_group_run(&cli_toplevel, argc, argv);
    /* Output that did not reach stdout (a full disk, a closed descriptor)
     * is a failure, not a success. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error("cannot write to standard output: %s", strerror(errno ? errno : EIO));
        if (rc == CLI_EXIT_OK)
            rc = CLI_EXIT_INPUT;
    }
    return rc;
}
