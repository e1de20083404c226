/* The progress line. See progress.h. */
#include "cli/progress.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The line is redrawn this often. */
#define PROGRESS_PERIOD_NS 250000000L

static double elapsed(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + (now.tv_nsec - t0->tv_nsec) * 1e-9;
}

/* Draws the line if it is due; p->mu held. */
static void draw(cli_progress *p)
{
    double s = elapsed(&p->t0);
    if (s < p->delay_s || !p->label[0])
        return;
    fprintf(p->f, "\rweft: %s  %.1f s\033[K", p->label, s);
    fflush(p->f);
    p->shown = true;
}

static void *progress_main(void *arg)
{
    cli_progress *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += PROGRESS_PERIOD_NS;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&p->cv, &p->mu, &until);
        if (!p->stop)
            draw(p);
    }
    if (p->shown) {
        fputs("\r\033[K", p->f);
        fflush(p->f);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

bool cli_progress_delay(double *out)
{
    const char *v = getenv("WEFT_PROGRESS_AFTER");
    *out = 1.0;
    if (!v)
        return true;
    char *end;
    double s = strtod(v, &end);
    if (!*v || *end || !(s >= 0) || s > 1e6)
        return false;
    *out = s;
    return true;
}

void cli_progress_start(cli_progress *p, FILE *f, bool enabled, double delay_s)
{
    memset(p, 0, sizeof *p);
    p->f = f;
    p->delay_s = delay_s;
    if (!enabled)
        return;
    clock_gettime(CLOCK_MONOTONIC, &p->t0);
    if (pthread_mutex_init(&p->mu, NULL))
        return;
    if (pthread_cond_init(&p->cv, NULL)) {
        pthread_mutex_destroy(&p->mu);
        return;
    }
    if (pthread_create(&p->th, NULL, progress_main, p)) {
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        return;
    }
    p->on = true;
}

void cli_progress_set(cli_progress *p, const char *fmt, ...)
{
    if (!p->on)
        return;
    pthread_mutex_lock(&p->mu);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->label, sizeof p->label, fmt, ap);
    va_end(ap);
    /* A new label shows at once once the delay has passed (with no delay,
     * every step is drawn however fast it runs). */
    draw(p);
    pthread_mutex_unlock(&p->mu);
}

void cli_progress_stop(cli_progress *p)
{
    if (!p->on)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->th, NULL);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    p->on = false;
}
