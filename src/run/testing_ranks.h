/* Test support: runs a function in n forked ranks joined by a rendezvous on
 * a port the kernel picked (never a fixed port). Linked into libweft like
 * base/testing.c, used only by the *_test.c programs of src/run. */
#ifndef WEFT_RUN_TESTING_RANKS_H
#define WEFT_RUN_TESTING_RANKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "weft/comm.h"

/* The least time the ranks of weft__test_ranks get before they are killed:
 * below CTest's 300 s per test, so that a hang is reported with the ranks'
 * exit codes rather than by CTest killing the parent and leaving them. */
#define WEFT__TEST_HANG_MS 240000

/* Runs in each child with its configuration (rank set; rank 0 has the
 * inherited listener); returns the child's exit code. */
typedef int (*weft__rank_main)(const weft_comm_config *cfg, void *arg);
/* Runs in the parent once every child is forked (may be NULL), e.g. to kill
 * one. */
typedef void (*weft__rank_parent)(const pid_t *pids, uint32_t n, int port, void *arg);

/* Forks n ranks with configuration tmpl (rank, size, addr and listen_fd are
 * filled in) and waits for them. Each child counts only its own checks
 * (weft_test_child_start) and exits nonzero when one failed, even if child
 * returned 0 (weft_test_child_status). A child still running after limit_ms,
 * or WEFT__TEST_HANG_MS if that is longer, is killed: the limit guards
 * against a hang and never judges speed (reduce_alltoall_test's ranks,
 * limited to 30 s, took 25 s at a load of 40 on 2 cores). Writes each child's exit code to codes[r]
 * (128 + signal when it was
 * killed) and when it was reaped, in ms of CLOCK_MONOTONIC, to ms[r] (may be
 * NULL).
 * Returns 0, or -1 if the ranks could not be started. */
int weft__test_ranks(uint32_t n, const weft_comm_config *tmpl, weft__rank_main child,
                     weft__rank_parent parent, void *arg, int limit_ms, int *codes, long *ms);

/* weft__test_ranks without a parent hook, then a test failure unless every
 * rank exited 0: "WHAT, N ranks: rank R exited with CODE" on stderr for
 * each rank that did not (n at most 64). */
void weft__test_ranks_ok(uint32_t n, const weft_comm_config *tmpl, weft__rank_main child, void *arg,
                         int limit_ms, const char *what);

/* A child's usual body: weft_comm_init, then fn, then weft_comm_free; the
 * exit code is fn's, or 100 + the error of weft_comm_init (its message on
 * stderr). */
int weft__test_with_comm(const weft_comm_config *cfg, int (*fn)(weft_comm *c, void *arg),
                         void *arg);

/* What a rank runs with its communicator; returns its exit code. */
typedef int (*weft__comm_body)(weft_comm *c, void *arg);

/* weft__test_ranks (without a parent hook) and weft__test_ranks_ok where
 * every child runs body(c, arg) under weft__test_with_comm. */
int weft__test_comm_ranks(uint32_t n, const weft_comm_config *tmpl, weft__comm_body body, void *arg,
                          int limit_ms, int *codes, long *ms);
void weft__test_comm_ranks_ok(uint32_t n, const weft_comm_config *tmpl, weft__comm_body body,
                              void *arg, int limit_ms, const char *what);

/* Rank r's test value for element i under op (a test's own choice of small
 * integers, so that results are exact in every type and order). */
typedef double (*weft__test_value)(weft_redop op, uint32_t r, size_t i);

/* The usual test value: small integers (-2 .. 2; for prod -1, 1 and 2), so
 * that every sum, product, min and max is exact in every type whatever the
 * order of combination (integer products wrap identically in any order). */
double weft__test_small(weft_redop op, uint32_t r, size_t i);

/* Stores value(op, r, i) for i < count into buf as type t. */
void weft__test_fill(weft__test_value value, weft_dtype t, weft_redop op, void *buf, uint32_t r,
                     size_t count);

/* The elements of got (count of type t) that differ from op over ranks
 * 0 .. n-1 of value, reduced locally in rank order. */
size_t weft__test_reduce_wrong(weft__test_value value, weft_dtype t, weft_redop op,
                               const unsigned char *got, uint32_t n, size_t count);

/* A TCP connection from this process to 127.0.0.1:port, as a stranger to a
 * job would make one (no hello sent); the socket, or -1. */
int weft__test_dial_loopback(int port);

#endif
