/* The GPU side of the compressors' compute costs (compress_cost.c): the
 * roofline model behind weft_compute_rates_get on volta, ampere, hopper
 * and blackwell. */
#ifndef WEFT_SYNTH_COMPRESS_COST_H
#define WEFT_SYNTH_COMPRESS_COST_H

#include "weft/compress.h"

/* The compute ops' rates of c's plans on GPU `device` (hbm bytes/s):
 * quantizers only; WEFT_EUNSUPPORTED otherwise, d naming why. out is
 * zeroed by the caller. */
weft_err weft__compute_rates_gpu(const weft_compressor *c, uint32_t elem_bytes, const char *device,
                                 double hbm, weft_compute_rates *out, weft_diag *d);

#endif
