/* The forked-rank harness (testing_ranks.h) reports each child's own
 * checks: a parent's earlier failure does not make a child exit nonzero,
 * and a child whose check failed exits nonzero even when its body returns
 * 0. Both used to be wrong: the counters are copied by fork, so after one
 * failure every later child of reduce_alltoall_test exited with the
 * parent's count (1, 4, 12, 14, ...), and a body that returned 0 lost its
 * failures. */
#include "base/testing.h"
#include "run/testing_ranks.h"

/* The usual body's status: the failed checks it sees. */
static int returns_failed(const weft_comm_config *cfg, void *arg)
{
    (void)cfg;
    (void)arg;
    return weft__test_failed;
}

/* Rank 1 fails one check (counted as CHECK does, without its message) and
 * returns 0. */
static int rank1_fails(const weft_comm_config *cfg, void *arg)
{
    (void)arg;
    if (cfg->rank == 1)
        weft__test_failed++;
    return 0;
}

/* The child's own code wins over its count. */
static int returns_7(const weft_comm_config *cfg, void *arg)
{
    (void)cfg;
    (void)arg;
    weft__test_failed++;
    return 7;
}

int main(void)
{
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    int codes[3] = {-1, -1, -1};
    /* A parent that has failed 3 checks (set aside here, restored below). */
    int passed = weft__test_passed, failed = weft__test_failed;
    weft__test_failed = 3;
    int r1 = weft__test_ranks(3, &cfg, returns_failed, NULL, NULL, 60000, codes, NULL);
    int after = weft__test_failed;
    int c0[3] = {codes[0], codes[1], codes[2]};
    int r2 = weft__test_ranks(3, &cfg, rank1_fails, NULL, NULL, 60000, codes, NULL);
    int c1[3] = {codes[0], codes[1], codes[2]};
    int r3 = weft__test_ranks(1, &cfg, returns_7, NULL, NULL, 60000, codes, NULL);
    int c2 = codes[0];
    weft__test_passed = passed;
    weft__test_failed = failed;

    CHECK_INT(r1, 0);
    CHECK_INT(after, 3); /* the children's counts are theirs */
    for (int r = 0; r < 3; r++)
        CHECK_INT(c0[r], 0);
    CHECK_INT(r2, 0);
    CHECK_INT(c1[0], 0);
    CHECK_INT(c1[1], 1);
    CHECK_INT(c1[2], 0);
    CHECK_INT(r3, 0);
    CHECK_INT(c2, 7);
    return weft_test_done();
}
