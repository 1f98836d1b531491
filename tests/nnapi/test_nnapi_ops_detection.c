/*
 * test_nnapi_ops_detection.c — DETECTION_POSTPROCESSING and CAST in the test
 * NNAPI runtime (feature level 29), from the NDK reference, in plain C (not
 * wick's src/ops/detection_postprocess.c).
 *
 * DETECTION_POSTPROCESSING, float32 here (float16 is not implemented):
 *   inputs 0 scores [b, A, C] (class 0 is the background, ignored),
 *   1 box deltas [b, A, L >= 4] (dy, dx, dh, dw first), 2 anchors [A, 4]
 *   (ctr_y, ctr_x, h, w), 3-6 the y, x, h, w scales (FLOAT32), 7 regular NMS
 *   (BOOL), 8 max_num_detections, 9 max classes per detection (fast NMS),
 *   10 max detections per class (regular NMS) (INT32), 11 the score threshold
 *   (scores below it are dropped), 12 the IoU threshold (FLOAT32), 13 whether
 *   the output labels count the background (BOOL);
 *   outputs 0 scores [b, max], 1 boxes [b, max, 4] (y1, x1, y2, x2), 2 labels
 *   [b, max] (INT32), 3 detections per batch [b] (INT32); unused slots zero.
 * Decoding, in float: yc = dy / y_scale * h_a + y_a, xc likewise, half height
 * 0.5 exp(dh / h_scale) h_a, half width likewise. NMS on one list of
 * candidates (score >= threshold, by decreasing score, equal scores by lower
 * anchor index): take the next one unless its IoU with a taken one exceeds the
 * threshold (IoU 0 when a box has no area), up to the limit. Fast: one list of
 * each anchor's best class (the lowest class among equal scores), limit
 * max_num_detections, output in the order taken; max classes per detection
 * other than 1 is not implemented here. Regular: one list per class, limit max
 * detections per class; all the taken ones by decreasing score (equal scores
 * in class order, then the order taken), the first max_num_detections.
 *
 * CAST: between TENSOR_FLOAT32 and TENSOR_INT32 (and to the same type), same
 * shape; int32 to float rounds to nearest, float to int32 truncates toward 0
 * and saturates (NaN gives 0); TENSOR_FLOAT16 to TENSOR_FLOAT32, exact (the
 * half's bits decoded here).
 */
#include "test_nnapi_ops.h"

/* An IEEE 754 binary16 value as a float (exact): sign, 5 exponent bits, 10 fraction bits. */
static float half_to_float(uint16_t h) {
  int sign = h >> 15, exponent = (h >> 10) & 0x1f, fraction = h & 0x3ff;
  float magnitude;
  if (exponent == 0)
    magnitude = ldexpf((float)fraction, -24); /* zero and subnormals */
  else if (exponent == 31)
    magnitude = fraction ? NAN : INFINITY;
  else
    magnitude = ldexpf((float)(fraction | 0x400), exponent - 25);
  return sign ? -magnitude : magnitude;
}

static int cast_op(nn_ctx *c) {
  const nn_operand *x = IN(c, 0), *y = OUT(c, 0);
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 1) BAD("CAST with %u inputs", c->op->nin);
    bool xin = x->type == ANEURALNETWORKS_TENSOR_FLOAT32 || x->type == ANEURALNETWORKS_TENSOR_INT32;
    bool yin = y->type == ANEURALNETWORKS_TENSOR_FLOAT32 || y->type == ANEURALNETWORKS_TENSOR_INT32;
    bool half =
        x->type == ANEURALNETWORKS_TENSOR_FLOAT16 && y->type == ANEURALNETWORKS_TENSOR_FLOAT32;
    if (!half && (!xin || !yin))
      BAD("CAST from %d to %d is not implemented by the test runtime", x->type, y->type);
    return ANEURALNETWORKS_NO_ERROR;
  }
  TRY(expect_dims(c, y, x->dims, x->rank));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  size_t n = count_of(x);
  const void *in = in_data(c, 0);
  void *out = out_data(c, 0);
  for (size_t i = 0; i < n; i++) {
    if (x->type == ANEURALNETWORKS_TENSOR_FLOAT16)
      ((float *)out)[i] = half_to_float(((const uint16_t *)in)[i]);
    else if (x->type == ANEURALNETWORKS_TENSOR_INT32 && y->type == ANEURALNETWORKS_TENSOR_FLOAT32)
      ((float *)out)[i] = (float)((const int32_t *)in)[i];
    else if (x->type == ANEURALNETWORKS_TENSOR_FLOAT32 && y->type == ANEURALNETWORKS_TENSOR_INT32)
      ((int32_t *)out)[i] = float_to_int(truncf(((const float *)in)[i]), INT32_MIN, INT32_MAX, 0);
    else
      memcpy((char *)out + 4 * i, (const char *)in + 4 * i, 4);
  }
  return ANEURALNETWORKS_NO_ERROR;
}

typedef struct candidate {
  float score;
  int32_t anchor, label;
} candidate;

/* Decreasing score; equal scores keep their order (an insertion sort: stable). */
static void sort_candidates(candidate *v, size_t n) {
  for (size_t i = 1; i < n; i++) {
    candidate x = v[i];
    size_t j = i;
    while (j > 0 && v[j - 1].score < x.score) {
      v[j] = v[j - 1];
      j--;
    }
    v[j] = x;
  }
}

static float iou(const float *a, const float *b) {
  float area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
  if (!(area_a > 0) || !(area_b > 0)) return 0;
  float h = fminf(a[2], b[2]) - fmaxf(a[0], b[0]), w = fminf(a[3], b[3]) - fmaxf(a[1], b[1]);
  float inter = (h > 0 ? h : 0) * (w > 0 ? w : 0);
  return inter / (area_a + area_b - inter);
}

/* Greedy NMS over sorted candidates v[0, n): keeps at most `limit` in place; returns how many. */
static size_t nms(candidate *v, size_t n, size_t limit, float threshold, const float *boxes) {
  size_t kept = 0;
  for (size_t i = 0; i < n && kept < limit; i++) {
    bool suppressed = false;
    for (size_t k = 0; k < kept && !suppressed; k++)
      suppressed =
          iou(&boxes[4 * (size_t)v[i].anchor], &boxes[4 * (size_t)v[k].anchor]) > threshold;
    if (!suppressed) v[kept++] = v[i];
  }
  return kept;
}

static int detection(nn_ctx *c) {
  if (c->phase == NN_CHECK_TYPES) {
    if (c->op->nin != 14 || c->op->nout != 4)
      BAD("DETECTION_POSTPROCESSING with %u inputs and %u outputs", c->op->nin, c->op->nout);
    for (uint32_t i = 0; i < 3; i++)
      if (IN(c, i)->type != ANEURALNETWORKS_TENSOR_FLOAT32)
        BAD("DETECTION_POSTPROCESSING input %u: float32 here (float16 is not implemented)", i);
    for (uint32_t i = 3; i < 14; i++) {
      int32_t want = i == 7 || i == 13   ? ANEURALNETWORKS_BOOL
                     : i >= 8 && i <= 10 ? ANEURALNETWORKS_INT32
                                         : ANEURALNETWORKS_FLOAT32;
      TRY(scalar_type(c, i, want));
    }
    if (OUT(c, 0)->type != ANEURALNETWORKS_TENSOR_FLOAT32 ||
        OUT(c, 1)->type != ANEURALNETWORKS_TENSOR_FLOAT32 ||
        OUT(c, 2)->type != ANEURALNETWORKS_TENSOR_INT32 ||
        OUT(c, 3)->type != ANEURALNETWORKS_TENSOR_INT32)
      BAD("DETECTION_POSTPROCESSING output types");
    return ANEURALNETWORKS_NO_ERROR;
  }
  const nn_operand *sc = IN(c, 0), *dl = IN(c, 1), *an = IN(c, 2);
  if (sc->rank != 3 || dl->rank != 3 || an->rank != 2 || dl->dims[0] != sc->dims[0] ||
      dl->dims[1] != sc->dims[1] || an->dims[0] != sc->dims[1] || an->dims[1] != 4 ||
      dl->dims[2] < 4 || sc->dims[2] < 2)
    BAD("DETECTION_POSTPROCESSING input shapes");
  float scale[4], score_th, iou_th;
  bool regular, bg_in_label;
  int32_t max_det, max_cls, per_class;
  for (uint32_t k = 0; k < 4; k++) TRY(get_f32(c, 3 + k, &scale[k]));
  TRY(get_bool(c, 7, &regular));
  TRY(get_i32(c, 8, &max_det));
  TRY(get_i32(c, 9, &max_cls));
  TRY(get_i32(c, 10, &per_class));
  TRY(get_f32(c, 11, &score_th));
  TRY(get_f32(c, 12, &iou_th));
  TRY(get_bool(c, 13, &bg_in_label));
  if (max_det < 1 || max_cls < 1 || per_class < 1)
    BAD("DETECTION_POSTPROCESSING with max detections %d, classes %d, per class %d", max_det,
        max_cls, per_class);
  if (!regular && max_cls != 1)
    FAIL(ANEURALNETWORKS_OP_FAILED,
         "fast DETECTION_POSTPROCESSING with %d classes per detection: not implemented", max_cls);
  uint32_t b = sc->dims[0], na = sc->dims[1], nc = sc->dims[2], len = dl->dims[2];
  uint32_t d0[2] = {b, (uint32_t)max_det}, d1[3] = {b, (uint32_t)max_det, 4}, d3[1] = {b};
  TRY(expect_dims(c, OUT(c, 0), d0, 2));
  TRY(expect_dims(c, OUT(c, 1), d1, 3));
  TRY(expect_dims(c, OUT(c, 2), d0, 2));
  TRY(expect_dims(c, OUT(c, 3), d3, 1));
  if (c->phase != NN_RUN) return ANEURALNETWORKS_NO_ERROR;
  const float *scores = in_data(c, 0), *deltas = in_data(c, 1), *anchors = in_data(c, 2);
  float *out_scores = out_data(c, 0), *out_boxes = out_data(c, 1);
  int32_t *out_labels = out_data(c, 2), *out_count = out_data(c, 3);
  size_t slots = (size_t)b * (size_t)max_det;
  memset(out_scores, 0, slots * sizeof(float));
  memset(out_boxes, 0, slots * 4 * sizeof(float));
  memset(out_labels, 0, slots * sizeof(int32_t));
  size_t per_batch = regular ? (size_t)na * (nc - 1) : na;
  float *boxes = malloc((size_t)na * 4 * sizeof(float) + 1);
  candidate *cand = malloc(per_batch * sizeof *cand + 1),
            *all = malloc(per_batch * sizeof *all + 1);
  int status = ANEURALNETWORKS_NO_ERROR;
  if (boxes == NULL || cand == NULL || all == NULL) {
    status = ANEURALNETWORKS_OUT_OF_MEMORY;
    goto done;
  }
  for (uint32_t bi = 0; bi < b; bi++) {
    const float *s = scores + (size_t)bi * na * nc, *dd = deltas + (size_t)bi * na * len;
    for (uint32_t a = 0; a < na; a++) {
      const float *q = &dd[(size_t)a * len], *anc = &anchors[4 * (size_t)a];
      float yc = q[0] / scale[0] * anc[2] + anc[0], xc = q[1] / scale[1] * anc[3] + anc[1];
      float hh = 0.5f * expf(q[2] / scale[2]) * anc[2], hw = 0.5f * expf(q[3] / scale[3]) * anc[3];
      float *box = &boxes[4 * (size_t)a];
      box[0] = yc - hh;
      box[1] = xc - hw;
      box[2] = yc + hh;
      box[3] = xc + hw;
    }
    size_t taken = 0;
    if (!regular) {
      size_t n = 0;
      for (uint32_t a = 0; a < na; a++) {
        uint32_t best = 1;
        for (uint32_t k = 2; k < nc; k++)
          if (s[(size_t)a * nc + k] > s[(size_t)a * nc + best]) best = k;
        float v = s[(size_t)a * nc + best];
        if (v >= score_th) cand[n++] = (candidate){v, (int32_t)a, (int32_t)best - 1};
      }
      sort_candidates(cand, n);
      taken = nms(cand, n, (size_t)max_det, iou_th, boxes);
      memcpy(all, cand, taken * sizeof *cand);
    } else {
      size_t total = 0;
      for (uint32_t k = 1; k < nc; k++) {
        size_t n = 0;
        for (uint32_t a = 0; a < na; a++) {
          float v = s[(size_t)a * nc + k];
          if (v >= score_th) cand[n++] = (candidate){v, (int32_t)a, (int32_t)k - 1};
        }
        sort_candidates(cand, n);
        size_t kept = nms(cand, n, (size_t)per_class, iou_th, boxes);
        memcpy(all + total, cand, kept * sizeof *cand);
        total += kept;
      }
      sort_candidates(all, total);
      taken = total < (size_t)max_det ? total : (size_t)max_det;
    }
    for (size_t i = 0; i < taken; i++) {
      size_t slot = (size_t)bi * (size_t)max_det + i;
      out_scores[slot] = all[i].score;
      memcpy(&out_boxes[4 * slot], &boxes[4 * (size_t)all[i].anchor], 4 * sizeof(float));
      out_labels[slot] = all[i].label + (bg_in_label ? 1 : 0);
    }
    out_count[bi] = (int32_t)taken;
  }
done:
  free(boxes);
  free(cand);
  free(all);
  return status;
}

int64_t nn_detection_operation_level(int32_t type) {
  switch (type) {
    case ANEURALNETWORKS_CAST:
    case ANEURALNETWORKS_DETECTION_POSTPROCESSING: return 29;
    default: return 0;
  }
}

int nn_detection_operation_phase(nn_ctx *c) {
  switch (c->op->type) {
    case ANEURALNETWORKS_CAST: return cast_op(c);
    case ANEURALNETWORKS_DETECTION_POSTPROCESSING: return detection(c);
    default: BAD("operation %d is not implemented by the test runtime", (int)c->op->type);
  }
}
