/* TP communication overlapped with the Linear GEMMs (--tp-comm-overlap):
 * Transformer Engine's userbuffers, as Megatron-Core runs them with
 * sequence parallelism. docs/step.md ("TP overlap") gives the model.
 *
 * What overlaps with what (NVIDIA/TransformerEngine transformer_engine/
 * pytorch/module/base.py, initialize_ub, @3ec998e9, v1.8: its `methods`
 * and its AG/RS lists), per layer:
 *   forward   the all-gather before QKV and before FC1 by ring exchange
 *             with the GEMM (qkv_fprop, fc1_fprop); the reduce-scatter
 *             after the output projection and after FC2 pipelined with
 *             the GEMM in chunks (proj_fprop, fc2_fprop);
 *   backward  the all-gather of the output gradient before the data
 *             gradient of the projection and of FC2 by ring exchange
 *             (proj_dgrad, fc2_dgrad); for QKV and FC1 the re-gather of
 *             the norm's output (sequence parallelism keeps only the local
 *             shard for the weight gradient) beside the data-gradient GEMM
 *             and the reduce-scatter of the data gradient beside the
 *             weight-gradient GEMM, each in bulk (qkv_dgrad, qkv_wgrad,
 *             fc1_dgrad, fc1_wgrad).
 * With FP8, every all-gather buffer is FP8 (1 byte per element); the
 * reduce-scatters stay 16-bit (base.py: fp8_buf).
 *
 * The three schedules (comm_gemm_overlap.h, same commit):
 *   ring     tp steps; step i runs the GEMM on chunk i (chunk 0 is local)
 *            while the copy engines send one chunk to the next rank
 *            (use_ce, default True: no SMs taken):
 *              span = g / tp + (tp - 1) max(g / tp, c_step)
 *   pipeline the GEMM in `splits` chunks on sms - k SMs (set_sm_margin:
 *            _math_sms = sms - num_sm), chunk j's reduce-scatter on k SMs
 *            during chunk j + 1's GEMM; the last one is exposed:
 *              g' = g sms / (sms - k)
 *              span = g' / n + (n - 1) max(g' / n, c_chunk) + c_chunk
 *   bulk     the collective on k SMs beside the whole GEMM, which keeps
 *            every SM (set_sm_margin 0) but loses k of them while the
 *            collective runs:
 *              span = max(c, g + c k / sms)
 * A Linear's exposed TP time is its span minus its GEMM alone: what the
 * GEMM is too short to hide plus the GEMM's slow-down by the SMs the
 * communication takes.
 */
#include <math.h>

#include "work/work_internal.h"

/* SMs per overlap, NeMo's H100 configuration for hidden 8192, TP 4
 * (NVIDIA/NeMo-Framework-Launcher launcher_scripts/conf/training/
 * tp_overlap/ub_cfg_h100_h8192_tp4_mbs1_seqlen8192.yaml @8325688d, the
 * one llama/llama3_70b.yaml names; Megatron-Bridge's
 * userbuffers_bf16_h100_h8192_tp4_mbs1_seqlen8192 has the same numbers,
 * NVIDIA-NeMo/Megatron-Bridge src/megatron/bridge/training/comm_overlap.py
 * @067f987d): pipelined reduce-scatters of proj_fprop 24 and fc2_fprop
 * 16, 4 splits each, SM margin set; bulk qkv_dgrad 4, qkv_wgrad 24,
 * fc1_dgrad 2, fc1_wgrad 4, no margin; ring exchanges on copy engines. */
#define UB_SPLITS 4
#define UB_PROJ_FPROP 24
#define UB_FC2_FPROP 16
#define UB_QKV_DGRAD 4
#define UB_QKV_WGRAD 24
#define UB_FC1_DGRAD 2
#define UB_FC1_WGRAD 4

uint32_t weft__ub_splits(void)
{
    return UB_SPLITS;
}

double weft__ub_ring_s(double gemm, double step, uint32_t tp)
{
    if (tp < 2)
        return gemm;
    double gc = gemm / tp;
    return gc + (tp - 1) * fmax(gc, step);
}

double weft__ub_pipe_s(double gemm, double chunk, uint32_t splits, uint32_t sms, uint32_t k)
{
    if (splits < 1)
        splits = 1;
    double g = sms > k ? gemm * sms / (double)(sms - k) : gemm;
    double gc = g / splits;
    return gc + (splits - 1) * fmax(gc, chunk) + chunk;
}

double weft__ub_bulk_s(double gemm, double comm, uint32_t sms, uint32_t k)
{
    double slow = sms > k ? comm * k / (double)sms : 0;
    return fmax(comm, gemm + slow);
}

void weft__ub_layer(const double lin[4], const weft__ub_comm *c, uint32_t tp, uint32_t sms,
                    weft__ub_exposed *out)
{
    double qkv = lin[0], proj = lin[1], fc1 = lin[2], fc2 = lin[3];
    double step = tp > 1 ? c->ag / (tp - 1) : 0;
    out->attn_f = weft__ub_ring_s(qkv, step, tp) - qkv +
                  weft__ub_pipe_s(proj, c->rs_chunk, UB_SPLITS, sms, UB_PROJ_FPROP) - proj;
    out->mlp_f = weft__ub_ring_s(fc1, step, tp) - fc1 +
                 weft__ub_pipe_s(fc2, c->rs_chunk, UB_SPLITS, sms, UB_FC2_FPROP) - fc2;
    out->attn_b = weft__ub_ring_s(proj, step, tp) - proj +
                  weft__ub_bulk_s(qkv, c->ag, sms, UB_QKV_DGRAD) - qkv +
                  weft__ub_bulk_s(qkv, c->rs, sms, UB_QKV_WGRAD) - qkv;
    out->mlp_b = weft__ub_ring_s(fc2, step, tp) - fc2 +
                 weft__ub_bulk_s(fc1, c->ag, sms, UB_FC1_DGRAD) - fc1 +
                 weft__ub_bulk_s(fc1, c->rs, sms, UB_FC1_WGRAD) - fc1;
}
