/*
 * normalization.c — reference LOG_SOFTMAX and L2_NORMALIZATION (float), both
 * over the innermost axis of a [rows, cols] view.
 *
 *   LOG_SOFTMAX       out = (x - max) - log(sum_j exp(x_j - max))
 *   L2_NORMALIZATION  out = x / max(sqrt(sum_j x_j^2), epsilon)
 *
 * Subtracting the row maximum keeps exp() from overflowing. The L2 epsilon
 * (LiteRT uses 1e-6) makes an all-zero row come out as zeros, not NaN.
 * Sums run left to right in float, as in LiteRT's reference kernels.
 */
#include <math.h>

#include "kernels/reference/reference.h"

void wick_f32_log_softmax__reference(int64_t rows, int64_t cols, const float *in, float *out) {
  for (int64_t r = 0; r < rows; r++) {
    const float *x = in + r * cols;
    float *y = out + r * cols;
    float max = -INFINITY;
    for (int64_t c = 0; c < cols; c++)
      if (x[c] > max) max = x[c];
    float sum = 0.0f;
    for (int64_t c = 0; c < cols; c++) sum += expf(x[c] - max);
    float log_sum = logf(sum);
    for (int64_t c = 0; c < cols; c++) y[c] = (x[c] - max) - log_sum;
  }
}

void wick_f32_l2_normalize__reference(int64_t rows, int64_t cols, float epsilon, const float *in,
                                      float *out) {
  for (int64_t r = 0; r < rows; r++) {
    const float *x = in + r * cols;
    float *y = out + r * cols;
    float sq = 0.0f;
    for (int64_t c = 0; c < cols; c++) sq += x[c] * x[c];
    float norm = sqrtf(sq);
    if (norm < epsilon) norm = epsilon; /* a NaN norm stays NaN */
    for (int64_t c = 0; c < cols; c++) y[c] = x[c] / norm;
  }
}
