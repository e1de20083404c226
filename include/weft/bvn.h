/* weft Birkhoff-von Neumann decomposition: a demand matrix as weighted
 * permutations.
 *
 * An n x n matrix M of non-negative integers (bytes box i sends to box j,
 * or the demand of an optical circuit switch) is first padded to a matrix
 * M' >= M whose rows and columns all sum to D, the largest line sum of M
 * (a greedy pass over the entries in row-major order adds
 * min(row deficit, column deficit) to each). M' / D is doubly stochastic,
 * so by Birkhoff's theorem its support holds a perfect matching; the
 * decomposition peels them: find a perfect matching on the support, give
 * it weight w = its smallest entry, subtract w along it, repeat until M'
 * is zero. The weights sum to D exactly, and the weighted sum of the
 * permutations is M' exactly (integers throughout, no rounding).
 *
 * Rounds: every peel zeroes at least one entry and moves to a proper face
 * of the Birkhoff polytope, so there are at most (n-1)^2 + 1 = n^2-2n+2
 * (Marcus-Ree); a uniform matrix with a zero diagonal gives n-1. A
 * schedule that runs round k for weight[k] time units at rate 1 per
 * matched pair delivers M in D units, which no schedule with one
 * transmitter and one receiver per line can beat.
 *
 * Time: the first matching by augmenting paths (Kuhn's algorithm, O(n^3)
 * worst case, near O(n^2) on dense supports); each later round repairs the
 * previous matching: only rows whose matched entry reached zero are
 * re-matched, each by one augmenting-path search; the least matched entry
 * is kept per block of 8 rows and recomputed only where a search changed
 * a row, so a round usually costs O(n / 8) plus a short search (and the
 * copy of its permutation). Memory O(n^2 + rounds x n). A dense skewed
 * 128 x 128 matrix takes milliseconds (bench/a2a_plan.c prints it); a
 * dense 1,024 x 1,024 one can have ~10^6 rounds, which is why FLASH
 * decomposes the box-to-box matrix, not the rank matrix.
 *
 * Used by the flash all-to-all schedule (src/synth/classic_flash.c);
 * meant for circuit scheduling on optical switches too.
 */
#ifndef WEFT_BVN_H
#define WEFT_BVN_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/err.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct weft_bvn {
    uint32_t n;       /* matrix order */
    uint32_t rounds;  /* permutations */
    uint64_t line;    /* D: the largest line sum of M = the sum of the weights */
    uint64_t *weight; /* rounds weights, each >= 1 */
    /* rounds x n: perm[k*n + i] = the column row i is matched to in round
     * k. Padding may match i to a j with M[i][j] = 0. */
    uint32_t *perm;
    uint64_t padded; /* sum of M' - M: bytes added by the padding */
} weft_bvn;

/* Decomposes the n x n row-major matrix m (n >= 1). On success *out owns
 * arrays that weft_bvn_fini releases. Errors: WEFT_EINVAL for n 0 or m
 * NULL, WEFT_EOVERFLOW when a line sum does not fit in 64 bits,
 * WEFT_ENOMEM. O(n^2) memory besides the result. */
WEFT_API weft_err weft_bvn_decompose(const uint64_t *m, uint32_t n, weft_bvn *out, weft_diag *d);
/* Releases what weft_bvn_decompose stored; safe on a zeroed struct. */
WEFT_API void weft_bvn_fini(weft_bvn *b);

#ifdef __cplusplus
}
#endif
#endif
