/* A rank that never joins (bootstrap/tcp.c): when rank 0's deadline passes
 * with rank 2 of 3 missing, rank 0 says so, naming the rank and its
 * timeout, and answers rank 1, which joined, with the same (a BOOT_MISSING
 * hello), so rank 1 names rank 2 too instead of suggesting a wrong secret.
 * Rank 1 waits longer than rank 0, so the answer is what ends its wait. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/testing.h"
#include "weft/comm.h"

enum { ROOT_MS = 700, JOINER_MS = 60000 };

typedef struct shared {
    int err;
    char msg[512];
} shared_t;

static void test_missing_rank(void)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&a, sizeof a) == 0 && listen(lfd, 8) == 0 &&
          getsockname(lfd, (struct sockaddr *)&a, &alen) == 0);
    char addr[32];
    snprintf(addr, sizeof addr, "127.0.0.1:%u", (unsigned)ntohs(a.sin_port));
    shared_t *sh =
        mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(sh != MAP_FAILED);
    if (sh == MAP_FAILED)
        return;
    memset(sh, 0, sizeof *sh);
    weft_comm_config cfg;
    weft_comm_config_init(&cfg);
    cfg.size = 3;
    cfg.transport = WEFT_TRANSPORT_TCP;
    cfg.has_secret = true;
    memset(cfg.secret, 0x5a, sizeof cfg.secret);
    pid_t pid = fork();
    if (pid == 0) { /* rank 1: joins (the listener's backlog takes it at once) */
        close(lfd);
        cfg.rank = 1;
        cfg.addr = addr;
        cfg.timeout_ms = JOINER_MS;
        weft_comm *c = NULL;
        weft_diag d;
        weft_diag_clear(&d);
        sh->err = (int)weft_comm_init(&cfg, &c, &d);
        memcpy(sh->msg, d.msg, sizeof sh->msg - 1);
        _exit(0);
    }
    CHECK(pid > 0);
    cfg.rank = 0;
    cfg.listen_fd = lfd;
    cfg.timeout_ms = ROOT_MS;
    weft_comm *c = NULL;
    weft_diag d;
    weft_diag_clear(&d);
    CHECK_ERR(weft_comm_init(&cfg, &c, &d), WEFT_ETIMEDOUT);
    CHECK_STR(d.msg, "bootstrap: rank 2 did not join within 700 ms (2 of 3 ranks joined)");
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status));
    CHECK_INT(sh->err, (int)WEFT_ETIMEDOUT);
    char want[256];
    snprintf(want, sizeof want,
             "bootstrap: the job did not form: rank 2 did not join within 700 ms (rank 0 at %s "
             "waited; 1 of 3 ranks missing)",
             addr);
    CHECK_STR(sh->msg, want);
    close(lfd);
    munmap(sh, sizeof *sh);
}

int main(void)
{
    test_missing_rank();
    return weft_test_done();
}
