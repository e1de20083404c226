/* The NCCL tuner plugin's cost per call, loaded as NCCL loads it
 * (docs/tuner.md): init, the first getCollInfo of each size class (which
 * fills the class) and a cached one (the target is under 10 us), on
 * h100:2 (16 GPUs), h100:16 (128), clos:hosts=32 (256), h100:4 with SHARP
 * rail switches (32) and one GPU on each of h100:16's hosts (16), for NCCL's five
 * tuned collectives at 8 B .. 1 GiB. Then the tuner's choice per size
 * (the least entry of the table, as NCCL picks): "2M:tree/LL128/16" is
 * the tree with LL128 on 16 channels from 2 MiB on, up to the next
 * change.
 *
 *   bench_nccl_tuner [PATH/libweft_nccl_tuner.so]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The v6 layout, as src/tuner/nccl_tuner_abi.h restates it (bench/ uses
 * public headers only, so the few lines needed are here). */
typedef struct {
    const char *name;
    int (*init)(void **context, unsigned long long comm_id, size_t ranks, size_t nodes,
                void *logger, void *nvl, void *constants);
    int (*getCollInfo)(void *context, int func, size_t bytes, int pipe_ops, float **table,
                       int num_algo, int num_proto, int reg_buff, int *channels);
    int (*finalize)(void *context);
    void *getChunkSize;
} tuner_v6;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* NCCL's table before the plugin on a machine where NCCL enables every
 * algorithm: the ring, the tree for allreduce (func 4), and the others
 * (CollNet, NVLS, NVLS tree, PAT) for every protocol; the plugin writes
 * weft's cost where weft's model runs the pair, and a pair it does not
 * keeps this large cost. */
static void prefill(float t[7][3], int func)
{
    for (int a = 0; a < 7; a++)
        for (int p = 0; p < 3; p++)
            t[a][p] = (a == 1 || (a == 0 && func == 4) || a > 1) ? 1e6f : -1.0f;
}

static const char *const algo_names[7] = {
    "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
static const char *const proto_names[3] = {"LL", "LL128", "Simple"};

static void bench(const tuner_v6 *v6, const char *spec, size_t ranks, size_t nodes)
{
    setenv("WEFT_FABRIC", spec, 1);
    void *ctx = NULL;
    double t0 = now_us();
    if (v6->init(&ctx, 1, ranks, nodes, NULL, NULL, NULL) != 0) {
        fprintf(stderr, "init failed on %s\n", spec);
        exit(1);
    }
    double init_us = now_us() - t0;
    double first_sum = 0, first_max = 0, cached_sum = 0, cached_max = 0;
    long calls = 0;
    float t[7][3];
    int channels;
    const int reps = 1000;
    for (int func = 0; func < 5; func++) {
        for (size_t b = 8; b <= ((size_t)1 << 30); b *= 2) {
            prefill(t, func);
            t0 = now_us();
            v6->getCollInfo(ctx, func, b, 1, (float **)t, 7, 3, 0, &channels);
            double first = now_us() - t0;
            t0 = now_us();
            for (int r = 0; r < reps; r++) {
                prefill(t, func);
                v6->getCollInfo(ctx, func, b + (size_t)r % (b / 2 + 1), 1, (float **)t, 7, 3, 0,
                                &channels);
            }
            double cached = (now_us() - t0) / reps;
            first_sum += first;
            cached_sum += cached;
            first_max = first > first_max ? first : first_max;
            cached_max = cached > cached_max ? cached : cached_max;
            calls++;
        }
    }
    printf("%-14s %4zu ranks %3zu nodes: init %9.1f us; first call per class mean %6.2f us "
           "max %6.2f us; cached mean %6.3f us max %6.3f us\n",
           spec, ranks, nodes, init_us, first_sum / calls, first_max, cached_sum / calls,
           cached_max);
    /* The choice per size (powers of two), printed where it changes. */
    static const char *const func_names[5] = {"broadcast", "reduce", "allgather", "reducescatter",
                                              "allreduce"};
    for (int func = 4; func >= 0; func--) {
        printf("  %-13s", func_names[func]);
        int last_a = -1, last_p = -1, last_c = -1;
        for (size_t b = 8; b <= ((size_t)1 << 30); b *= 2) {
            prefill(t, func);
            channels = 0;
            v6->getCollInfo(ctx, func, b, 1, (float **)t, 7, 3, 0, &channels);
            int ba = -1, bp = -1;
            for (int a = 0; a < 7; a++)
                for (int p = 0; p < 3; p++)
                    if (t[a][p] >= 0 && (ba < 0 || t[a][p] < t[ba][bp])) {
                        ba = a;
                        bp = p;
                    }
            if (ba == last_a && bp == last_p && channels == last_c)
                continue;
            last_a = ba;
            last_p = bp;
            last_c = channels;
            if (b < 1024)
                printf(" %zuB:", b);
            else if (b < 1 << 20)
                printf(" %zuK:", b >> 10);
            else
                printf(" %zuM:", b >> 20);
            printf("%s/%s/%d", algo_names[ba], proto_names[bp], channels);
        }
        printf("\n");
    }
    v6->finalize(ctx);
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : WEFT_TUNER_SO;
    void *lib = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        return 1;
    }
    const tuner_v6 *v6 = dlsym(lib, "ncclTunerPlugin_v6");
    if (!v6) {
        fprintf(stderr, "%s has no ncclTunerPlugin_v6\n", path);
        return 1;
    }
    bench(v6, "h100:2", 16, 2);
    bench(v6, "h100:16", 128, 16);
    bench(v6, "clos:hosts=32", 256, 32);
    bench(v6, "h100:4,sharp=1", 32, 4);
    bench(v6, "h100:16", 16, 16);
    dlclose(lib);
    return 0;
}
