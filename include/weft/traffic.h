/* weft traffic matrices: how many bytes each rank sends to each rank.
 *
 * A traffic matrix is the demand of one all-to-all (alltoallv): entry (i, j)
 * is the number of bytes rank i sends to rank j. The diagonal is allowed (a
 * rank's own share stays local and crosses no link). It is data, shared by
 * the bound (maximum concurrent flow), synthesis (alltoallv plans), the
 * simulator, the runtime (`weft perf alltoall --traffic`) and training steps
 * (expert-parallel dispatch and combine).
 *
 * File format (docs/traffic-format.md): N lines of N non-negative decimal
 * integers separated by blanks; `#` starts a comment to the end of the line;
 * blank lines are ignored. Errors name the file, line and column.
 *
 * Contract: this header is owned by the `plan` module (src/plan/traffic*.c);
 * a weft_traffic is plain data the caller owns and frees with
 * weft_traffic_free.
 */
#ifndef WEFT_TRAFFIC_H
#define WEFT_TRAFFIC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "weft/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_traffic {
    uint32_t ranks;  /* N */
    uint64_t *bytes; /* N*N, row-major: bytes[i*N + j] = bytes rank i sends to j */
} weft_traffic;

/* A zero matrix of n ranks (n >= 1). */
WEFT_API weft_err weft_traffic_new(uint32_t n, weft_traffic *out, weft_diag *d);
/* Frees the entries; t may be NULL or already freed (bytes NULL). */
WEFT_API void weft_traffic_free(weft_traffic *t);

/* Parses the text of a matrix file; `name` is used in messages
 * ("NAME:LINE:COL: reason"). */
WEFT_API weft_err weft_traffic_parse(const char *text, size_t len, const char *name,
                                     weft_traffic *out, weft_diag *d);
/* Reads and parses a matrix file (messages name the whole path). */
WEFT_API weft_err weft_traffic_load_file(const char *path, weft_traffic *out, weft_diag *d);

/* Limits. A file is read up to WEFT_TRAFFIC_MAX_FILE_BYTES (a larger one is
 * WEFT_ELIMIT, "PATH: larger than 256 MiB, the limit for a traffic matrix
 * file"); a matrix has at most WEFT_TRAFFIC_MAX_RANKS ranks (N*N entries of
 * 8 bytes: 2 GiB at the limit). Every matrix weft builds or reads keeps the
 * sum of all its entries <= UINT64_MAX, so every row, column and total fits
 * a uint64_t (weft_traffic_check tests a matrix built by hand). */
#define WEFT_TRAFFIC_MAX_FILE_BYTES ((size_t)256 << 20)
#define WEFT_TRAFFIC_MAX_RANKS 16384u

/* WEFT_OK when t has 1..WEFT_TRAFFIC_MAX_RANKS ranks and its entries sum to
 * at most UINT64_MAX; else WEFT_ELIMIT or WEFT_EOVERFLOW with the reason. */
WEFT_API weft_err weft_traffic_check(const weft_traffic *t, weft_diag *d);

/* Writes t in the file format: one line per rank, entries separated by one
 * blank, a newline after each line. Returns WEFT_EIO when f reports a write
 * error. `comment` (may be NULL) is written first as "# COMMENT" lines (one
 * per '\n'-separated line). */
WEFT_API weft_err weft_traffic_write(FILE *f, const weft_traffic *t, const char *comment,
                                     weft_diag *d);

/* Uniform all-to-all, as nccl-tests' alltoall: every rank holds `size`
 * bytes and sends size/n of them to every rank, itself included. size must
 * be a multiple of n (else WEFT_EINVAL: "size 1000 is not a multiple of 3
 * ranks"), so that every block is a whole number of bytes. */
WEFT_API weft_err weft_traffic_uniform(uint32_t n, uint64_t size, weft_traffic *out, weft_diag *d);

/* How popular each expert is when a token picks its experts. */
typedef enum weft_traffic_skew {
    WEFT_TRAFFIC_SKEW_UNIFORM, /* every expert equally likely */
    WEFT_TRAFFIC_SKEW_ZIPF,    /* expert e (0-based) has weight 1/(e+1)^s */
} weft_traffic_skew;

/* Expert-parallel MoE dispatch (docs/traffic-format.md "MoE"):
 * - experts 0..E-1 are spread over the ranks in blocks: expert e lives on
 *   rank floor(e*N/E) (E/N consecutive experts per rank when N divides E;
 *   block sizes differ by at most one otherwise; with E < N some ranks hold
 *   no expert);
 * - each of the T tokens of each rank is routed to K DISTINCT experts,
 *   drawn one after another without replacement with probability
 *   proportional to their weights (zipf: expert 0 is the hottest, so the
 *   first ranks receive most);
 * - each (token, expert) pair sends H bytes from the token's rank to the
 *   expert's rank (a token going to two experts of one rank is sent twice,
 *   as Megatron-LM's all-to-all dispatcher does). So every row sums to
 *   exactly T*K*H.
 * The draws come from xoshiro256** seeded by splitmix64 from (seed, rank),
 * and zipf weights are computed in fixed point (integers only), so a
 * (params, seed) gives the same matrix on every platform and compiler.
 * combine (the way back) is the transpose: weft_traffic_transpose. */
typedef struct weft_traffic_moe_params {
    uint32_t ranks;        /* N >= 1 */
    uint32_t experts;      /* E >= 1 */
    uint32_t topk;         /* K, 1 <= K <= E */
    uint64_t tokens;       /* T per rank */
    uint64_t hidden_bytes; /* H per token and expert */
    weft_traffic_skew skew;
    uint32_t zipf_milli; /* zipf exponent s in thousandths (1200: s = 1.2), <= 8000 */
    uint64_t seed;
} weft_traffic_moe_params;

/* Largest expert count weft_traffic_moe accepts. */
#define WEFT_TRAFFIC_MAX_EXPERTS (1u << 20)

/* The dispatch matrix of p. WEFT_EINVAL names the first bad parameter
 * ("--topk 9 is more than the 8 experts": K > E, zero ranks, experts or
 * topk, more than the limits); WEFT_EOVERFLOW when N*T*K*H exceeds
 * UINT64_MAX bytes. */
WEFT_API weft_err weft_traffic_moe(const weft_traffic_moe_params *p, weft_traffic *out,
                                   weft_diag *d);

/* The transpose of t (MoE combine: every expert returns what it received). */
WEFT_API weft_err weft_traffic_transpose(const weft_traffic *t, weft_traffic *out, weft_diag *d);

/* What each rank sends and receives. */
typedef struct weft_traffic_stats {
    uint64_t total;                        /* sum of all entries */
    uint64_t offdiag;                      /* sum of entries i != j (what crosses ranks) */
    uint64_t max_entry;                    /* largest entry */
    uint64_t max_send;                     /* largest row sum */
    uint64_t min_send;                     /* smallest row sum */
    uint64_t max_recv;                     /* largest column sum */
    uint64_t min_recv;                     /* smallest column sum */
    uint32_t max_send_rank, max_recv_rank; /* the first rank with that sum */
    /* max / mean of the row (column) sums: 1 when balanced, N at most;
     * 0 for an all-zero matrix. */
    double send_skew, recv_skew;
} weft_traffic_stats;

/* Row i's sum (bytes rank i sends) and column j's (bytes rank j receives). */
WEFT_API uint64_t weft_traffic_send(const weft_traffic *t, uint32_t i);
WEFT_API uint64_t weft_traffic_recv(const weft_traffic *t, uint32_t j);
/* Fills *out. t must satisfy weft_traffic_check (its sums fit). */
WEFT_API void weft_traffic_get_stats(const weft_traffic *t, weft_traffic_stats *out);
/* The size an alltoallv of t is simulated and reported at: its total / N
 * (the mean bytes a rank sends, weft_plan_traffic_size exactly) rounded to
 * whole bytes, at least 1; 0 when t moves no bytes. */
WEFT_API uint64_t weft_traffic_sim_size(const weft_traffic *t);

/* Entry (i, j). */
static inline uint64_t weft_traffic_at(const weft_traffic *t, uint32_t i, uint32_t j)
{
    return t->bytes[(size_t)i * t->ranks + j];
}

#ifdef __cplusplus
}
#endif
#endif
