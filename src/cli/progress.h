/* A progress line for long commands: one line on stderr, rewritten in
 * place ("\r...ESC[K") four times a second, that appears only after the
 * command has run for a while (a second by default) and only when stderr
 * is a terminal, and is erased when the work ends. Output to a pipe or file is never touched,
 * so scripts and tests see nothing.
 *
 * The line is drawn by a helper thread (started only when enabled), so a
 * single long library call still shows its elapsed time without the
 * library knowing about terminals. cli_progress_set may be called at any
 * time from the command's thread; it copies a label under a mutex and, once
 * the delay has passed, draws it at once (so with no delay every label is
 * drawn, however fast its step runs).
 */
#ifndef WEFT_CLI_PROGRESS_H
#define WEFT_CLI_PROGRESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

typedef struct cli_progress {
    bool on;    /* the thread runs */
    bool stop;  /* asks the thread to end (under mu) */
    bool shown; /* something was drawn and must be erased */
    FILE *f;    /* stderr */
    char label[160];
    double delay_s; /* nothing is drawn before this */
    struct timespec t0;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th;
} cli_progress;

/* Starts a progress line on f when `enabled` (the caller passes
 * isatty(fileno(f))), drawn from delay_s seconds on; otherwise every call
 * is a no-op. Never fails: when the thread cannot start the command simply
 * runs without progress. */
void cli_progress_start(cli_progress *p, FILE *f, bool enabled, double delay_s);
/* The delay the weft command uses: 1 s, or WEFT_PROGRESS_AFTER (seconds,
 * a number >= 0) from the environment. False when that is malformed. */
bool cli_progress_delay(double *out);
/* Sets what the line says (printf format); the elapsed time is appended. */
void cli_progress_set(cli_progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Ends the thread and erases the line. Safe to call twice. */
void cli_progress_stop(cli_progress *p);

#endif
