/* A minimal test harness for weft's *_test.c programs.
 *
 * CHECK-style macros record a failure with file:line and go on, so one run
 * reports every broken expectation; a test's main returns weft_test_done(),
 * which prints "N passed, N failed" and gives the exit status. A test that
 * cannot run here (a missing fixture, no root) returns WEFT_TEST_SKIP (77),
 * which CTest reports as skipped.
 */
#ifndef WEFT_BASE_TESTING_H
#define WEFT_BASE_TESTING_H

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "weft/err.h"

#define WEFT_TEST_SKIP 77

#ifndef WEFT_BUILDING
/* Under CTest a test's stdout is a pipe, which stdio buffers whole: what a
 * test prints as it goes would appear only at its end, and not at all when
 * CTest's TIMEOUT kills it, leaving an empty log. Line-buffered from the
 * start, a slow or stuck test shows how far it got (and a forked rank does
 * not inherit half a buffer). Static, in every test program that includes
 * this header, never in the library. */
__attribute__((constructor)) static void weft__test_line_buffered(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
}
#endif

extern int weft__test_passed;
extern int weft__test_failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond)                                                                                  \
            weft__test_passed++;                                                                   \
        else {                                                                                     \
            weft__test_failed++;                                                                   \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

#define CHECK_INT(a, b)                                                                            \
    do {                                                                                           \
        long long va_ = (long long)(a), vb_ = (long long)(b);                                      \
        if (va_ == vb_)                                                                            \
            weft__test_passed++;                                                                   \
        else {                                                                                     \
            weft__test_failed++;                                                                   \
            fprintf(stderr, "%s:%d: CHECK_INT failed: %s == %lld, expected %s == %lld\n",          \
                    __FILE__, __LINE__, #a, va_, #b, vb_);                                         \
        }                                                                                          \
    } while (0)

/* Whether a is within tol x |b| of b, the expected value. */
static inline bool weft_test_rel_close(double a, double b, double tol)
{
    return fabs(a - b) <= tol * fabs(b);
}

/* a within a relative tol of the expected b; prints both when not. */
#define CHECK_REL(a, b, tol)                                                                       \
    do {                                                                                           \
        double x_ = (a), y_ = (b);                                                                 \
        if (!weft_test_rel_close(x_, y_, tol))                                                     \
            fprintf(stderr, "%s:%d: %s = %.17g, expected %.17g\n", __FILE__, __LINE__, #a, x_,     \
                    y_);                                                                           \
        CHECK(weft_test_rel_close(x_, y_, tol));                                                   \
    } while (0)

#define CHECK_ERR(a, b)                                                                            \
    do {                                                                                           \
        weft_err ea_ = (a), eb_ = (b);                                                             \
        if (ea_ == eb_)                                                                            \
            weft__test_passed++;                                                                   \
        else {                                                                                     \
            weft__test_failed++;                                                                   \
            fprintf(stderr, "%s:%d: CHECK_ERR failed: %s gave %s, expected %s\n", __FILE__,        \
                    __LINE__, #a, weft_err_name(ea_), weft_err_name(eb_));                         \
        }                                                                                          \
    } while (0)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *sa_ = (a), *sb_ = (b);                                                         \
        if (sa_ && sb_ && strcmp(sa_, sb_) == 0)                                                   \
            weft__test_passed++;                                                                   \
        else {                                                                                     \
            weft__test_failed++;                                                                   \
            fprintf(stderr, "%s:%d: CHECK_STR failed: %s is \"%s\", expected \"%s\"\n", __FILE__,  \
                    __LINE__, #a, sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)");                     \
        }                                                                                          \
    } while (0)

/* Passes when haystack contains needle. */
#define CHECK_CONTAINS(hay, needle)                                                                \
    do {                                                                                           \
        const char *ha_ = (hay), *ne_ = (needle);                                                  \
        if (ha_ && ne_ && strstr(ha_, ne_))                                                        \
            weft__test_passed++;                                                                   \
        else {                                                                                     \
            weft__test_failed++;                                                                   \
            fprintf(stderr, "%s:%d: CHECK_CONTAINS failed: \"%s\" does not contain \"%s\"\n",      \
                    __FILE__, __LINE__, ha_ ? ha_ : "(null)", ne_ ? ne_ : "(null)");               \
        }                                                                                          \
    } while (0)

/* Prints the tally and returns the exit status for main. */
int weft_test_done(void);

/* For a forked child that runs checks (a test's ranks): call first thing
 * in the child. The counters are the parent's copies, so a parent's
 * earlier failure would make every later child exit nonzero, blamed for
 * what it did not do; the child starts from zero instead. */
void weft_test_child_start(void);
/* The exit status of such a child whose own code is rc: rc when nonzero,
 * else its failed checks (at most 99), so that a child whose checks failed
 * never exits 0 (its counters die with it; the parent sees the status). */
int weft_test_child_status(int rc);

/* Reads a whole file into a NUL-terminated heap buffer (free with free()).
 * Returns NULL when it cannot be read. */
char *weft_test_read_file(const char *path, size_t *len);

/* The next number of a deterministic generator (xorshift64*, Vigna) whose
 * state is *state (any value but 0), so that a failing test repeats. */
uint64_t weft_test_rng(uint64_t *state);

/* Runs ctor(arg) with allocation failure injected at the 1st, 2nd, ... call
 * until it succeeds. Each failing run must return WEFT_ENOMEM and leave no
 * live allocation; the succeeding run's result is released by dtor(arg).
 * Returns the number of injected failures checked, or -1 after reporting a
 * failed check. */
typedef weft_err (*weft_test_ctor)(void *arg);
typedef void (*weft_test_dtor)(void *arg);
long weft_test_oom_sweep(const char *what, weft_test_ctor ctor, weft_test_dtor dtor, void *arg);

#endif
