/* The TCP transport's notices (tcp.c, "Causes"): a rank that closes its
 * communicator while its peers still wait on it tells them so, and every
 * survivor names it with its pid ("tcp: rank 1 (pid P) closed its
 * communicator", possibly "(reported by rank N)"), where the connection's
 * end alone said only "closed the connection". Three and five ranks over
 * TCP: all run one allreduce, then rank 1 closes while the others start
 * another (the direct schedule at 3 ranks, the ring at 5). */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/testing.h"
#include "run/testing_ranks.h"
#include "weft/comm.h"

enum { MAX_RANKS = 5, CLOSER = 1, MSG_BYTES = 256, CODE_BASE = 50 };

typedef struct log {
    int pid[MAX_RANKS];
    char msg[MAX_RANKS][MSG_BYTES];
    size_t count; /* elements of the second allreduce */
} log_t;

static int body(weft_comm *c, void *arg)
{
    log_t *log = arg;
    uint32_t me = weft_comm_rank(c);
    log->pid[me] = (int)getpid();
    int32_t v[4] = {1, 2, 3, 4};
    if (weft_allreduce(c, v, v, 4, WEFT_INT32, WEFT_SUM, NULL) != WEFT_OK)
        return 90;
    if (me == CLOSER)
        return 0; /* closes its communicator */
    static int32_t big[1 << 16];
    weft_diag d;
    weft_diag_clear(&d);
    weft_err e = weft_allreduce(c, big, big, log->count, WEFT_INT32, WEFT_SUM, &d);
    memcpy(log->msg[me], d.msg, MSG_BYTES - 1);
    return CODE_BASE + (int)e;
}

/* True when msg is `want`, or `want` followed by " (reported by rank N)"
 * for a survivor N other than self. */
static bool names(const char *msg, const char *want, uint32_t self, uint32_t n)
{
    size_t k = strlen(want);
    if (strncmp(msg, want, k) != 0)
        return false;
    if (!msg[k])
        return true;
    unsigned by = n;
    int end = -1;
    return sscanf(msg + k, " (reported by rank %u)%n", &by, &end) == 1 && end >= 0 &&
           msg[k + (size_t)end] == '\0' && by < n && by != CLOSER && by != self;
}

static void run(uint32_t n, size_t count)
{
    log_t *log = mmap(NULL, sizeof *log, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (log == MAP_FAILED)
        return;
    memset(log, 0, sizeof *log);
    log->count = count;
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.transport = WEFT_TRANSPORT_TCP;
    cfg.timeout_ms = 600000; /* only the notice can end the wait */
    int codes[MAX_RANKS];
    CHECK_INT(weft__test_comm_ranks(n, &cfg, body, log, 120000, codes, NULL), 0);
    char want[96];
    snprintf(want, sizeof want, "tcp: rank %d (pid %d) closed its communicator", CLOSER,
             log->pid[CLOSER]);
    for (uint32_t r = 0; r < n; r++) {
        CHECK_INT(codes[r], r == CLOSER ? 0 : CODE_BASE + (int)WEFT_EPEER);
        if (r == CLOSER)
            continue;
        bool ok = names(log->msg[r], want, r, n);
        if (!ok)
            fprintf(stderr, "%u ranks: rank %u: \"%s\", want \"%s\"\n", n, r, log->msg[r], want);
        CHECK(ok);
    }
    munmap(log, sizeof *log);
}

int main(void)
{
    run(3, 16);      /* the direct allreduce */
    run(5, 1 << 16); /* the ring, 256 KiB */
    return weft_test_done();
}
