/* weft_launch: N ranks of a command on this host (see weft/comm.h).
 *
 * The launcher binds the rendezvous socket itself (127.0.0.1, port 0) and
 * hands it to rank 0 as an inherited descriptor, so no port is ever guessed
 * and no other process can take it between choosing and binding. It draws
 * the job secret and passes it in the environment, which only the ranks (and
 * the same user) can read.
 *
 * Supervision: one waitpid loop. The first rank that fails decides the
 * status; the others get SIGTERM (and SIGCONT, so a stopped rank acts on it)
 * to their process group, then SIGKILL after the grace period. SIGINT/SIGTERM
 * to the launcher are forwarded the same way (the handlers only set a flag;
 * the loop does the work); a signal the launcher inherited as ignored stays
 * ignored, in the launcher and in the ranks.
 *
 * A stopped rank (SIGSTOP, a terminal stop) does not exit: its peers time
 * out waiting for it and the first of them to exit would take the blame. So
 * the loop also watches stops (WUNTRACED, WCONTINUED), and when a rank fails
 * while another one is stopped the message names the stopped one first.
 *
 * Each rank gets a parent-death signal (SIGKILL, prctl PR_SET_PDEATHSIG):
 * a launcher that is killed outright (SIGKILL cannot be caught) takes its
 * ranks with it instead of leaving them running. The signal comes when the
 * thread that forked exits; weft launch forks from its only thread.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "run/clock.h"
#include "run/liveness.h"
#include "run/transport/shm/leftovers.h"
#include "weft/comm.h"

static volatile sig_atomic_t got_signal;

/* The signal mask the launcher had before fork_rank blocked SIGINT and
 * SIGTERM: each rank gets it back once its handlers are reset (the
 * launcher is single-threaded, so one copy serves). */
static sigset_t launcher_mask;

static void on_signal(int sig)
{
    got_signal = sig;
}

/* In the child, between fork and exec: only async-signal-safe calls and
 * setenv (the launcher is single-threaded). `parent` is the launcher's pid,
 * `keep_int` and `keep_term` whether it inherited SIGINT and SIGTERM
 * ignored (the rank then inherits that too). */
static void exec_rank(const weft_launch_opts *o, uint32_t rank, uint32_t restart, int lfd,
                      const char *addr, const char *secret, pid_t parent, bool keep_int,
                      bool keep_term)
{
    char num[32];
    /* The launcher may have died between fork and prctl, before the
     * parent-death signal was armed: then this process has another parent
     * already. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
        _exit(126);
    setpgid(0, 0);
    signal(SIGINT, keep_int ? SIG_IGN : SIG_DFL);
    signal(SIGTERM, keep_term ? SIG_IGN : SIG_DFL);
    /* A SIGTERM sent to the rank's group before this point waited,
     * blocked; it acts now, with the default action. */
    sigprocmask(SIG_SETMASK, &launcher_mask, NULL);
    snprintf(num, sizeof num, "%u", rank);
    setenv("WEFT_RANK", num, 1);
    snprintf(num, sizeof num, "%u", o->ranks);
    setenv("WEFT_SIZE", num, 1);
    setenv("WEFT_ADDR", addr, 1);
    setenv("WEFT_SECRET", secret, 1);
    if (restart) {
        snprintf(num, sizeof num, "%u", restart);
        setenv("WEFT_RESTART", num, 1);
    } else {
        unsetenv("WEFT_RESTART");
    }
    if (rank == 0) {
        fcntl(lfd, F_SETFD, 0); /* inherited across exec */
        snprintf(num, sizeof num, "%d", lfd);
        setenv("WEFT_LISTEN_FD", num, 1);
    } else {
        close(lfd);
        unsetenv("WEFT_LISTEN_FD");
    }
    execvp(o->argv[0], o->argv);
    int e = errno;
    char msg[WEFT_DIAG_MSG_SIZE]; /* a whole path and the reason */
    int n = snprintf(msg, sizeof msg, "weft launch: rank %u: cannot run '%s': %s\n", rank,
                     o->argv[0], strerror(e));
    if (n > 0)
        (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
    _exit(127);
}

/* fork() for a rank. SIGINT and SIGTERM stay blocked across the fork
 * until the child has reset the launcher's handlers (exec_rank): a signal
 * that reached the child before then would otherwise run the inherited
 * on_signal, set a flag in the child's copy of memory and be lost, and
 * the rank would live on until the SIGKILL after the grace period. */
static pid_t fork_rank(void)
{
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, &launcher_mask);
    pid_t p = fork();
    if (p != 0) /* the launcher, or a failed fork */
        sigprocmask(SIG_SETMASK, &launcher_mask, NULL);
    return p;
}

static void signal_all(const pid_t *pids, uint32_t n, int sig)
{
    for (uint32_t r = 0; r < n; r++) {
        if (pids[r] > 0) {
            kill(-pids[r], sig);
            /* A stopped rank keeps any other signal pending until it runs. */
            if (sig != SIGKILL)
                kill(-pids[r], SIGCONT);
        }
    }
}

/* Adds to msg (size bytes, holding a rank's failure) the ranks other than
 * `failed` that are stopped now: as the waitpid loop saw them (stopsig[r],
 * the stopping signal), as a stop report still queued behind the
 * failure's shows them, or as /proc shows them. The first is named before
 * the failure, as the likely cause; the others are counted. */
static void name_stopped(const pid_t *pids, const int *stopsig, uint32_t n, uint32_t failed,
                         char *msg, size_t size)
{
    uint32_t first = n, more = 0;
    int sig = 0;
    for (uint32_t r = 0; r < n; r++) {
        if (r == failed || pids[r] <= 0)
            continue;
        int s = stopsig[r];
        siginfo_t si;
        memset(&si, 0, sizeof si);
        /* WNOWAIT: the loop still gets the report. */
        if (!s && waitid(P_PID, (id_t)pids[r], &si, WSTOPPED | WNOHANG | WNOWAIT) == 0 &&
            si.si_pid == pids[r] && si.si_code == CLD_STOPPED)
            s = si.si_status;
        if (!s && weft__pid_stopped(pids[r]))
            s = -1; /* a stop not (yet) reported to us */
        if (!s)
            continue;
        if (first == n) {
            first = r;
            sig = s;
        } else {
            more++;
        }
    }
    if (first == n)
        return;
    char head[160], also[48] = "";
    if (more)
        snprintf(also, sizeof also, " (and %u more ranks)", more);
    int k;
    if (sig > 0)
        k = snprintf(head, sizeof head,
                     "rank %u (pid %d) was stopped by signal %d (%s)%s, and then ", first,
                     (int)pids[first], sig, strsignal(sig), also);
    else
        k = snprintf(head, sizeof head, "rank %u (pid %d) is stopped%s, and then ", first,
                     (int)pids[first], also);
    if (k <= 0)
        return;
    size_t hl = (size_t)k < sizeof head ? (size_t)k : sizeof head - 1;
    if (hl >= size)
        hl = size - 1;
    size_t tl = strlen(msg);
    if (hl + tl >= size)
        tl = size - 1 - hl;
    memmove(msg + hl, msg, tl);
    memcpy(msg, head, hl);
    msg[hl + tl] = '\0';
}

/* Starts rank r again in place of pid `dead`, which ended with wait
 * status st: one line on stderr, and started[] grows by the new pid.
 * The new pid, or -1 when it cannot be started (the failure then stands). */
static pid_t restart_rank(const weft_launch_opts *o, uint32_t r, uint32_t restart, int lfd,
                          const char *addr, const char *secret, pid_t me, bool keep_int,
                          bool keep_term, pid_t **started, uint32_t *nstarted, int st, pid_t dead,
                          weft_launch_result *res)
{
    pid_t *grown = weft__realloc_array(*started, (size_t)*nstarted + 1, sizeof *grown);
    if (!grown) {
        fprintf(stderr, "weft launch: rank %u (pid %d) failed; cannot restart it: out of memory\n",
                r, (int)dead);
        return -1;
    }
    *started = grown;
    char what[96];
    if (WIFEXITED(st))
        snprintf(what, sizeof what, "exited with status %d", WEXITSTATUS(st));
    else
        snprintf(what, sizeof what, "was killed by signal %d (%s)", WTERMSIG(st),
                 strsignal(WTERMSIG(st)));
    fprintf(stderr, "weft launch: rank %u (pid %d) %s; restart %u of %u\n", r, (int)dead, what,
            res->restarted + 1, o->restarts);
    fflush(stderr);
    pid_t p = fork_rank();
    if (p == 0)
        exec_rank(o, r, restart, lfd, addr, secret, me, keep_int, keep_term);
    if (p < 0) {
        fprintf(stderr, "weft launch: restart %u of rank %u failed: cannot fork: %s\n",
                res->restarted + 1, r, strerror(errno));
        return -1;
    }
    setpgid(p, p);
    grown[(*nstarted)++] = p;
    res->restarted++;
    return p;
}

weft_err weft_launch(const weft_launch_opts *o, weft_launch_result *res, weft_diag *d)
{
    if (!o || !o->argv || !o->argv[0])
        return weft_diag_set(d, WEFT_EINVAL, "launch: no command given");
    if (o->ranks < 1 || o->ranks > WEFT_MAX_RANKS)
        return weft_diag_set(d, WEFT_EINVAL, "launch: %u ranks is not in 1 .. %u", o->ranks,
                             WEFT_MAX_RANKS);
    unsigned char key[WEFT_SECRET_BYTES];
    char secret[2 * WEFT_SECRET_BYTES + 1];
    if (weft_secret_generate(key))
        return weft_diag_set(d, WEFT_EIO, "launch: cannot draw a random job secret");
    weft_secret_format(key, secret);

    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(lfd, SOMAXCONN) < 0 ||
        getsockname(lfd, (struct sockaddr *)&a, &alen) < 0) {
        weft_err e = weft_diag_set(d, WEFT_EIO, "launch: cannot open the rendezvous socket: %s",
                                   strerror(errno));
        if (lfd >= 0)
            close(lfd);
        return e;
    }
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%u", (unsigned)ntohs(a.sin_port));

    /* pids: the ranks still running; started: every rank started, for
     * removing what stopped ranks left in /dev/shm at the end. */
    pid_t *pids = weft__calloc(o->ranks, sizeof *pids);
    pid_t *started = weft__calloc(o->ranks, sizeof *started);
    if (!pids || !started) {
        weft__free(pids);
        weft__free(started);
        close(lfd);
        return weft_diag_code(d, WEFT_ENOMEM);
    }
    /* stopsig[r]: the signal that stopped rank r, 0 while it runs. */
    int *stopsig = weft__calloc(o->ranks, sizeof *stopsig);
    if (!stopsig) {
        weft__free(pids);
        weft__free(started);
        close(lfd);
        return weft_diag_code(d, WEFT_ENOMEM);
    }
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: waitpid returns EINTR */
    sigemptyset(&sa.sa_mask);
    got_signal = 0;
    sigaction(SIGINT, NULL, &old_int);
    sigaction(SIGTERM, NULL, &old_term);
    bool keep_int = old_int.sa_handler == SIG_IGN, keep_term = old_term.sa_handler == SIG_IGN;
    if (!keep_int)
        sigaction(SIGINT, &sa, NULL);
    if (!keep_term)
        sigaction(SIGTERM, &sa, NULL);
    pid_t me = getpid();

    res->status = 0;
    res->restarted = 0;
    res->failed_rank = -1;
    res->message[0] = '\0';
    weft_err e = WEFT_OK;
    uint32_t running = 0;
    fflush(stdout);
    fflush(stderr);
    for (uint32_t r = 0; r < o->ranks; r++) {
        pid_t p = fork_rank();
        if (p == 0)
            exec_rank(o, r, 0, lfd, addr, secret, me, keep_int, keep_term);
        if (p < 0) {
            e = weft_diag_set(d, WEFT_EIO, "launch: cannot start rank %u: %s", r, strerror(errno));
            break;
        }
        setpgid(p, p); /* also in the child: whichever runs first */
        pids[r] = started[r] = p;
        running++;
    }
    /* A restarted rank 0 needs the rendezvous socket again. */
    if (!o->restarts || e) {
        close(lfd);
        lfd = -1;
    }
    if (e)
        signal_all(pids, o->ranks, SIGKILL);
    uint32_t nstarted = o->ranks;
    uint32_t *restarts = o->restarts ? weft__calloc(o->ranks, sizeof *restarts) : NULL;
    if (o->restarts && !restarts && !e) {
        e = weft_diag_code(d, WEFT_ENOMEM);
        signal_all(pids, o->ranks, SIGKILL);
    }

    int64_t kill_at = 0; /* when to send SIGKILL; 0: not stopping */
    int64_t grace = (int64_t)(o->grace_ms ? o->grace_ms : 2000) * 1000000;
    bool forwarded = false;
    while (running) {
        if (got_signal && !forwarded) {
            signal_all(pids, o->ranks, got_signal);
            forwarded = true;
            if (!kill_at)
                kill_at = weft__now_ns() + grace;
        }
        if (kill_at && weft__now_ns() >= kill_at) {
            signal_all(pids, o->ranks, SIGKILL);
            kill_at = INT64_MAX;
        }
        int st;
        pid_t p = waitpid(-1, &st, WUNTRACED | WCONTINUED | (kill_at ? WNOHANG : 0));
        if (p == 0) {
            struct timespec ts = {0, 10000000};
            nanosleep(&ts, NULL);
            continue;
        }
        if (p < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        uint32_t r = 0;
        while (r < o->ranks && pids[r] != p)
            r++;
        if (r == o->ranks)
            continue;
        if (WIFSTOPPED(st) || WIFCONTINUED(st)) {
            stopsig[r] = WIFSTOPPED(st) ? WSTOPSIG(st) : 0;
            continue;
        }
        pids[r] = 0;
        stopsig[r] = 0;
        running--;
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (code != 0 && res->failed_rank < 0 && !e && !got_signal && !kill_at &&
            res->restarted < o->restarts) {
            pid_t q = restart_rank(o, r, ++restarts[r], lfd, addr, secret, me, keep_int, keep_term,
                                   &started, &nstarted, st, p, res);
            if (q > 0) {
                pids[r] = q;
                running++;
                continue;
            }
            restarts[r]--;
        }
        if (code != 0 && res->failed_rank < 0 && !e) {
            res->failed_rank = (int)r;
            res->status = code;
            if (WIFEXITED(st))
                snprintf(res->message, sizeof res->message,
                         "rank %u (pid %d) exited with status %d", r, (int)p, code);
            else
                snprintf(res->message, sizeof res->message,
                         "rank %u (pid %d) was killed by signal %d (%s)", r, (int)p, WTERMSIG(st),
                         strsignal(WTERMSIG(st)));
            name_stopped(pids, stopsig, o->ranks, r, res->message, sizeof res->message);
            if (running) {
                signal_all(pids, o->ranks, SIGTERM);
                if (!kill_at)
                    kill_at = weft__now_ns() + grace;
            }
        }
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    /* Every rank has exited (or could not be waited for: then it is not
     * ours to clean). */
    if (!running)
        weft__shm_remove_leftovers(weft__shm_job_tag(key, sizeof key), started, nstarted);
    if (lfd >= 0)
        close(lfd);
    weft__free(restarts);
    weft__free(pids);
    weft__free(started);
    weft__free(stopsig);
    return e;
}
