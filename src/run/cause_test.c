/* Failure causes (cause.h): the line each kind gives, when "(reported by
 * rank W)" is added, which records read from a peer are trusted, and
 * truncation into a short buffer. */
#include <string.h>

#include "base/testing.h"
#include "run/cause.h"

static const char *line(const weft__cause *c, uint32_t self)
{
    static char buf[256];
    weft__cause_format(c, self, buf, sizeof buf);
    return buf;
}

int main(void)
{
    weft__cause died = {.kind = WEFT__CAUSE_DIED, .rank = 2, .pid = 1234, .witness = 3};
    /* The witness itself, and everyone else. */
    CHECK_STR(line(&died, 3), "rank 2 (pid 1234) died");
    CHECK_STR(line(&died, 0), "rank 2 (pid 1234) died (reported by rank 3)");
    died.pid = 0;
    CHECK_STR(line(&died, 1), "rank 2 died (reported by rank 3)");

    weft__cause closed = {.kind = WEFT__CAUSE_CLOSED, .rank = 0, .pid = 77, .witness = 1};
    CHECK_STR(line(&closed, 1), "rank 0 (pid 77) closed its communicator");
    CHECK_STR(line(&closed, 5), "rank 0 (pid 77) closed its communicator (reported by rank 1)");

    weft__cause stalled = {.kind = WEFT__CAUSE_STALLED, .rank = 2, .witness = 3, .detail = 1000};
    CHECK_STR(line(&stalled, 3), "rank 3 waited 1000 ms for rank 2 without progress");
    CHECK_STR(line(&stalled, 0), "rank 3 waited 1000 ms for rank 2 without progress");

    /* A rank that failed by itself reports itself, on every rank. */
    weft__cause oom = weft__cause_local(1, 4321, WEFT_ENOMEM);
    CHECK_INT(oom.kind, WEFT__CAUSE_LOCAL);
    CHECK_INT(oom.witness, 1);
    CHECK_STR(line(&oom, 0), "rank 1 (pid 4321) failed: out of memory");
    CHECK_STR(line(&oom, 1), "rank 1 (pid 4321) failed: out of memory");
    weft__cause odd = weft__cause_local(1, 4321, 999);
    CHECK_STR(line(&odd, 0), "rank 1 (pid 4321) failed: unknown error");

    weft__cause aborted = {.kind = WEFT__CAUSE_ABORTED, .rank = 3, .pid = 9, .witness = 0};
    CHECK_STR(line(&aborted, 0), "rank 3 (pid 9) failed (aborted its communicator)");
    CHECK_STR(line(&aborted, 1),
              "rank 3 (pid 9) failed (aborted its communicator) (reported by rank 0)");

    /* Records from a peer: recorded, a known kind, ranks in range. */
    CHECK(weft__cause_valid(&closed, 2));
    CHECK(!weft__cause_valid(&closed, 1)); /* witness 1 of 1 rank */
    weft__cause zero;
    memset(&zero, 0, sizeof zero);
    CHECK(!weft__cause_valid(&zero, 4));
    weft__cause bad = died;
    bad.kind = WEFT__CAUSE_KINDS;
    CHECK(!weft__cause_valid(&bad, 4));
    bad = died;
    bad.rank = 4;
    CHECK(!weft__cause_valid(&bad, 4));
    CHECK(weft__cause_valid(&died, 4));

    /* Short buffers are cut, always terminated. */
    char small[12];
    memset(small, 'x', sizeof small);
    died.pid = 1234;
    weft__cause_format(&died, 0, small, sizeof small);
    CHECK_STR(small, "rank 2 (pid");
    char tiny[26];
    weft__cause_format(&died, 0, tiny, sizeof tiny);
    CHECK_STR(tiny, "rank 2 (pid 1234) died (r");

    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft__cause_diag(&d, "shm", &died, 1), WEFT_EPEER);
    CHECK_ERR(d.err, WEFT_EPEER);
    CHECK_STR(d.msg, "shm: rank 2 (pid 1234) died (reported by rank 3)");
    CHECK_ERR(weft__cause_diag(NULL, "shm", &died, 1), WEFT_EPEER);
    return weft_test_done();
}
