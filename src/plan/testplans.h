/* Hand-written plans shared by the plan module's tests: small, correct
 * plans of every collective, each commented with what it does. */
#ifndef WEFT_PLAN_TESTPLANS_H
#define WEFT_PLAN_TESTPLANS_H

typedef struct weft__test_plan {
    const char *name;
    const char *text;
} weft__test_plan;

static const weft__test_plan weft__good_plans[] = {
    {"allgather ring, 3 ranks, in place", "weft-plan 1\ncoll allgather\nranks 3\nchunks 1\n"
                                          "op 0 copy 0:out[0] 1:out[0]\n"
                                          "op 1 copy 1:out[1] 2:out[1]\n"
                                          "op 2 copy 2:out[2] 0:out[2]\n"
                                          "op 3 copy 1:out[0] 2:out[0] deps=0\n"
                                          "op 4 copy 2:out[1] 0:out[1] deps=1\n"
                                          "op 5 copy 0:out[2] 1:out[2] deps=2\n"},
    {"allgather direct, 2 ranks, 2 chunks each, out of place",
     "weft-plan 1\ncoll allgather\nranks 2\nchunks 2\ninplace no\n"
     "op 0 copy 0:in[0] 0:out[0] n=2\n"
     "op 1 copy 1:in[0] 1:out[2] n=2\n"
     "op 2 copy 0:in[0] 1:out[0] n=2 ch=1\n"
     "op 3 copy 1:in[0] 0:out[2] n=2 ch=1\n"},
    {"reducescatter ring, 3 ranks, in place", "weft-plan 1\ncoll reducescatter\nranks 3\nchunks 1\n"
                                              "op 0 reduce 0:in[2] 1:in[2]\n"
                                              "op 1 reduce 1:in[2] 2:in[2] deps=0\n"
                                              "op 2 reduce 1:in[0] 2:in[0]\n"
                                              "op 3 reduce 2:in[0] 0:in[0] deps=2\n"
                                              "op 4 reduce 2:in[1] 0:in[1]\n"
                                              "op 5 reduce 0:in[1] 1:in[1] deps=4\n"},
    {"reducescatter, 2 ranks, out of place through scratch",
     "weft-plan 1\ncoll reducescatter\nranks 2\nchunks 1\nscratch 1\ninplace no\n"
     "op 0 copy 1:in[0] 0:scratch[0]\n"
     "op 1 copy 0:in[1] 1:scratch[0]\n"
     "op 2 copy 0:in[0] 0:out[0]\n"
     "op 3 copy 1:in[1] 1:out[0]\n"
     "op 4 reduce 0:scratch[0] 0:out[0] deps=0,2\n"
     "op 5 reduce 1:scratch[0] 1:out[0] deps=1,3\n"},
    {"allreduce, 2 ranks, reduce-scatter then allgather, out of place",
     "weft-plan 1\ncoll allreduce\nranks 2\nchunks 2\ninplace no\n"
     "op 0 copy 0:in[0] 0:out[0] n=2\n"
     "op 1 copy 1:in[0] 1:out[0] n=2\n"
     "op 2 reduce 0:out[1] 1:out[1] deps=0,1\n"
     "op 3 reduce 1:out[0] 0:out[0] deps=0,1\n"
     "op 4 copy 1:out[1] 0:out[1] deps=2\n"
     "op 5 copy 0:out[0] 1:out[0] deps=3\n"},
    {"allreduce allpairs, 2 ranks, scratch and a nop",
     "weft-plan 1\ncoll allreduce\nranks 2\nchunks 2\nscratch 1\n"
     "op 0 copy 1:out[0] 0:scratch[0]\n"
     "op 1 copy 0:out[1] 1:scratch[0]\n"
     "op 2 nop 0 deps=0\n"
     "op 3 reduce 0:scratch[0] 0:out[0] deps=2\n"
     "op 4 reduce 1:scratch[0] 1:out[1] deps=1\n"
     "op 5 copy 0:out[0] 1:out[0] deps=3\n"
     "op 6 copy 1:out[1] 0:out[1] deps=4\n"},
    {"broadcast tree, 4 ranks, root 1", "weft-plan 1\ncoll broadcast\nranks 4\nroot 1\nchunks 1\n"
                                        "op 0 copy 1:out[0] 0:out[0]\n"
                                        "op 1 copy 1:out[0] 2:out[0]\n"
                                        "op 2 copy 2:out[0] 3:out[0] deps=1\n"},
    {"reduce chain, 3 ranks, root 0", "weft-plan 1\ncoll reduce\nranks 3\nroot 0\nchunks 1\n"
                                      "op 0 reduce 2:in[0] 1:in[0]\n"
                                      "op 1 reduce 1:in[0] 0:in[0] deps=0\n"},
    {"alltoall, 2 ranks, out of place",
     "weft-plan 1\ncoll alltoall\nranks 2\nchunks 1\ninplace no\n"
     "op 0 copy 0:in[0] 0:out[0]\n"
     "op 1 copy 0:in[1] 1:out[0]\n"
     "op 2 copy 1:in[0] 0:out[1]\n"
     "op 3 copy 1:in[1] 1:out[1]\n"},
    {"alltoall, 3 ranks, in place through scratch",
     "weft-plan 1\ncoll alltoall\nranks 3\nchunks 1\nscratch 2\n"
     /* Everyone first parks what it receives in scratch, then moves it in. */
     "op 0 copy 0:out[1] 1:scratch[0]\n"
     "op 1 copy 0:out[2] 2:scratch[0]\n"
     "op 2 copy 1:out[0] 0:scratch[0]\n"
     "op 3 copy 1:out[2] 2:scratch[1]\n"
     "op 4 copy 2:out[0] 0:scratch[1]\n"
     "op 5 copy 2:out[1] 1:scratch[1]\n"
     "op 6 copy 0:scratch[0] 0:out[1] deps=2,0\n"
     "op 7 copy 0:scratch[1] 0:out[2] deps=4,1\n"
     "op 8 copy 1:scratch[0] 1:out[0] deps=0,2\n"
     "op 9 copy 1:scratch[1] 1:out[2] deps=5,3\n"
     "op 10 copy 2:scratch[0] 2:out[0] deps=1,4\n"
     "op 11 copy 2:scratch[1] 2:out[1] deps=3,5\n"},
    {"allreduce, 4 ranks, recursive halving then doubling (strided sets)",
     "weft-plan 1\ncoll allreduce\nranks 4\nchunks 4\n"
     "op 0 reduce 0:out[2] 2:out[2] n=2\n"
     "op 1 reduce 2:out[0] 0:out[0] n=2\n"
     "op 2 reduce 1:out[2] 3:out[2] n=2\n"
     "op 3 reduce 3:out[0] 1:out[0] n=2\n"
     "op 4 reduce 0:out[1] 1:out[1] deps=1,3\n"
     "op 5 reduce 1:out[0] 0:out[0] deps=3,1\n"
     "op 6 reduce 2:out[3] 3:out[3] deps=0,2\n"
     "op 7 reduce 3:out[2] 2:out[2] deps=2,0\n"
     "op 8 copy 0:out[0] 1:out[0] deps=5\n"
     "op 9 copy 1:out[1] 0:out[1] deps=4\n"
     "op 10 copy 2:out[2] 3:out[2] deps=7\n"
     "op 11 copy 3:out[3] 2:out[3] deps=6\n"
     "op 12 copy 0:out[0] 2:out[0] n=2 deps=5,9\n"
     "op 13 copy 2:out[2] 0:out[2] n=2 deps=11,7\n"
     "op 14 copy 1:out[0] 3:out[0] n=2 deps=8,4\n"
     "op 15 copy 3:out[2] 1:out[2] n=2 deps=10,6\n"},
    {"allreduce, 1 rank, no ops", "weft-plan 1\ncoll allreduce\nranks 1\nchunks 3\n"},
};

#endif
