/* weft launch -n N [--grace S] [--restart N] [--] CMD [ARGS...]: N ranks of a command on
 * this host, joined through the environment (weft_launch in weft/comm.h does
 * the work; this file reads flags and reports). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "weft/comm.h"

static const cli_opt launch_opts[] = {
    {"ranks", 'n', "N", "number of ranks to start (required, 1 .. 4096)"},
    {"grace", 0, "S", "seconds between SIGTERM and SIGKILL after a rank fails (default 2)"},
    {"restart", 0, "N", "restart a rank that fails, up to N restarts in the job (default 0)"},
    {NULL, 0, NULL, NULL},
};
static const cli_optgroup launch_group = {"options", launch_opts, false};

static const cli_syntax launch_syntax = {
    .path = "weft launch",
    .args = "-n N [--grace S] [--restart N] [--] CMD [ARGS...]",
    .about = "Runs N copies of CMD on this host, without MPI. Each copy gets WEFT_RANK,\n"
             "WEFT_SIZE, WEFT_ADDR (a rendezvous on 127.0.0.1 whose socket the launcher\n"
             "opened and hands to rank 0 as WEFT_LISTEN_FD) and WEFT_SECRET (a random\n"
             "per-job secret every connection must present), which is what\n"
             "weft_comm_init_env reads. Output of the ranks goes straight to this\n"
             "command's stdout and stderr.\n"
             "\n"
             "When a rank exits non-zero or is killed, the other ranks get SIGTERM and,\n"
             "after the grace period, SIGKILL; weft launch then names the rank on stderr\n"
             "and exits with that rank's status (128 + signal number when it was killed).\n"
             "A rank stopped by a signal (SIGSTOP) is named before the rank that failed\n"
             "while waiting for it. SIGINT and SIGTERM are passed on to every rank (unless\n"
             "they were ignored when weft launch started: then the ranks ignore them too);\n"
             "when weft launch itself is killed, even by SIGKILL, the ranks are killed.\n"
             "Exit 0 when every rank exited 0.\n"
             "\n"
             "With --restart N, a rank that exits non-zero or is killed is started again\n"
             "in its place instead (up to N restarts in the whole job, one line on stderr\n"
             "each), with WEFT_RESTART set to how many times that rank was restarted; the\n"
             "other ranks go on, and the job forms again when they call weft_ckpt_join,\n"
             "which restores every rank from the checkpoints kept in peers' memory\n"
             "(docs/run.md, \"Checkpoints in peers' memory\"). Once N restarts are used,\n"
             "a failure stops the job as above. A rank that exited 0 is not restarted.\n"
             "\n"
             "weft launch's options come before CMD: the first word that is not one of\n"
             "them starts CMD, and every word after it, flags included, is CMD's\n"
             "(weft launch -n 2 weft perf allreduce -n 5 runs 2 ranks of 'weft perf\n"
             "allreduce -n 5'). '--' before CMD is optional; it is needed only when CMD\n"
             "itself starts with '-'.\n",
    .groups = {&launch_group},
    .pos_names = {"CMD"},
    .min_pos = 1,
    .max_pos = CLI_UNLIMITED,
    .opts_end_at_pos = true,
};

int cli_cmd_launch(int argc, char **argv)
{
    cli_args a;
    int rc = cli_args_parse(&launch_syntax, argc, argv, &a);
    if (rc != CLI_CONTINUE)
        return rc;
    const char *n_text = cli_args_get(&a, "ranks");
    const char *grace_text = cli_args_get(&a, "grace");
    char *end;
    weft_launch_opts o = {.argv = a.pos};
    if (!n_text) {
        /* "weft launch CMD -n 2": the options were put after CMD, whose
         * words they became. */
        bool after = false;
        for (size_t i = 1; i < a.n_pos; i++)
            after = after || strcmp(a.pos[i], "-n") == 0 || strncmp(a.pos[i], "--ranks", 7) == 0;
        rc = cli_usage_error(&launch_syntax, "missing -n N (the number of ranks)%s",
                             after ? "; weft launch's options go before CMD, whose words "
                                     "follow it (weft launch -n N -- CMD ...)"
                                   : "");
        goto free_args;
    }
    errno = 0;
    unsigned long n = strtoul(n_text, &end, 10);
    if (*n_text < '0' || *n_text > '9' || *end || errno || n < 1 || n > WEFT_MAX_RANKS) {
        rc = cli_usage_error(&launch_syntax, "bad -n '%s': expected 1 .. %u", n_text,
                             WEFT_MAX_RANKS);
        goto free_args;
    }
    o.ranks = (uint32_t)n;
    if (grace_text) {
        double g = strtod(grace_text, &end);
        if (*grace_text < '0' || *grace_text > '9' || *end || !(g > 0) || g > 3600) {
            rc = cli_usage_error(&launch_syntax, "bad --grace '%s': expected seconds in (0, 3600]",
                                 grace_text);
            goto free_args;
        }
        o.grace_ms = (uint32_t)(g * 1000 + 0.5);
        if (!o.grace_ms)
            o.grace_ms = 1;
    }
    const char *restart_text = cli_args_get(&a, "restart");
    if (restart_text) {
        errno = 0;
        unsigned long r = strtoul(restart_text, &end, 10);
        if (*restart_text < '0' || *restart_text > '9' || *end || errno || r > 1000000) {
            rc = cli_usage_error(&launch_syntax, "bad --restart '%s': expected 0 .. 1000000",
                                 restart_text);
            goto free_args;
        }
        o.restarts = (uint32_t)r;
    }
    weft_launch_result res;
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_launch(&o, &res, &d);
    if (e) {
        rc = cli_fail(e, &d);
        goto free_args;
    }
    if (res.failed_rank >= 0)
        cli_error("launch: %s; the other ranks were stopped", res.message);
    rc = res.status;
free_args:
    cli_args_fini(&a);
    return rc;
}
