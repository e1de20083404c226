/* Transport figures: ping-pong latency (8 B), one-way bandwidth of large
 * messages, and ring allreduce bandwidth, over shared memory and TCP on
 * loopback, with forked ranks. Prints figures; never fails on time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/clock.h"
#include "run/testing_ranks.h"
#include "weft/comm.h"

enum { PINGS = 2000, BIG = 64 << 20, BIG_REPS = 8, AR_BYTES = 32 << 20, AR_REPS = 5 };

static int p2p(weft_comm *c, void *arg)
{
    (void)arg;
    uint32_t me = weft_comm_rank(c), peer = 1 - me;
    char small[8] = {0};
    for (int i = 0; i < 100; i++) /* warm up */
        me == 0 ? weft_send(c, peer, small, 8, NULL) : weft_recv(c, peer, small, 8, NULL);
    weft_comm_barrier(c, NULL);
    int64_t t0 = weft__now_ns();
    for (int i = 0; i < PINGS; i++) {
        if (me == 0) {
            weft_send(c, peer, small, 8, NULL);
            weft_recv(c, peer, small, 8, NULL);
        } else {
            weft_recv(c, peer, small, 8, NULL);
            weft_send(c, peer, small, 8, NULL);
        }
    }
    double rtt_us = (double)(weft__now_ns() - t0) / PINGS / 1e3;
    unsigned char *big = calloc(1, BIG);
    weft_comm_barrier(c, NULL);
    t0 = weft__now_ns();
    for (int i = 0; i < BIG_REPS; i++)
        me == 0 ? weft_send(c, peer, big, BIG, NULL) : weft_recv(c, peer, big, BIG, NULL);
    char ack = 0;
    me == 0 ? weft_recv(c, peer, &ack, 1, NULL) : weft_send(c, peer, &ack, 1, NULL);
    double secs = (double)(weft__now_ns() - t0) / 1e9;
    if (me == 0)
        printf("  %-4s ping-pong 8 B: %.1f us round trip; %d MiB messages: %.2f GB/s\n",
               weft_comm_transport(c, peer), rtt_us, BIG >> 20,
               (double)BIG * BIG_REPS / secs / 1e9);
    free(big);
    return 0;
}

static int allreduce(weft_comm *c, void *arg)
{
    (void)arg;
    float *buf = calloc(1, AR_BYTES);
    weft_allreduce(c, buf, buf, AR_BYTES / 4, WEFT_FLOAT, WEFT_SUM, NULL);
    weft_comm_barrier(c, NULL);
    int64_t t0 = weft__now_ns();
    for (int i = 0; i < AR_REPS; i++)
        weft_allreduce(c, buf, buf, AR_BYTES / 4, WEFT_FLOAT, WEFT_SUM, NULL);
    double secs = (double)(weft__now_ns() - t0) / 1e9 / AR_REPS;
    uint32_t n = weft_comm_size(c);
    if (weft_comm_rank(c) == 0)
        printf("  %-4s allreduce %d MiB float, %u ranks: %.1f ms, algbw %.2f GB/s, busbw %.2f "
               "GB/s\n",
               weft_comm_transport(c, 1), AR_BYTES >> 20, n, secs * 1e3, AR_BYTES / secs / 1e9,
               AR_BYTES / secs / 1e9 * 2 * (n - 1) / n);
    free(buf);
    return 0;
}

static int run_p2p(const weft_comm_config *cfg, void *arg)
{
    return weft__test_with_comm(cfg, p2p, arg);
}

static int run_allreduce(const weft_comm_config *cfg, void *arg)
{
    return weft__test_with_comm(cfg, allreduce, arg);
}

int main(void)
{
    printf("run_p2p: forked ranks on this host\n");
    for (int t = 0; t < 2; t++) {
        weft_comm_config cfg;
        weft_comm_config_init(&cfg);
        cfg.transport = t == 0 ? WEFT_TRANSPORT_SHM : WEFT_TRANSPORT_TCP;
        int codes[4];
        fflush(stdout);
        weft__test_ranks(2, &cfg, run_p2p, NULL, NULL, 120000, codes, NULL);
        for (uint32_t n = 2; n <= 4; n += 2)
            weft__test_ranks(n, &cfg, run_allreduce, NULL, NULL, 120000, codes, NULL);
    }
    return 0;
}
