/*
 * nnapi_ops_detection.c — the custom operator TFLite_Detection_PostProcess
 * (SSD box decoding + non-maximum suppression, src/ops/detection_postprocess.c)
 * as NNAPI's DETECTION_POSTPROCESSING (feature level 29), where the two mean
 * the same, field by field of the NDK reference:
 *
 *   NNAPI input / parameter             TFLite
 *   0 scores [b, anchors, classes]      class_predictions: NNAPI's class 0 is always the
 *                                       background and ignored, so TFLite's scores must carry
 *                                       the background column (num_classes + 1 columns)
 *   1 box deltas [b, anchors, >= 4]     box_encodings (dy, dx, dh, dw first; the rest ignored)
 *   2 anchors [anchors, 4]              anchors (ctr_y, ctr_x, h, w): constant here, h and
 *                                       w >= 0 (a negative one fails TFLite's invoke)
 *   3-6 y, x, h, w scales               y_scale, x_scale, h_scale, w_scale
 *   7 regular NMS                       use_regular_nms
 *   8 max_num_detections                max_detections
 *   9 max classes per detection (fast)  max_classes_per_detection: 1 only (TFLite writes that
 *                                       many classes per box into max_detections x it slots;
 *                                       NNAPI's outputs hold max_num_detections entries)
 *   10 max detections per class         detections_per_class (100 when the file omits it)
 *   11 score threshold                  nms_score_threshold (scores below it are dropped)
 *   12 IoU threshold                    nms_iou_threshold
 *   13 is_bg_in_label false             TFLite's classes start at 0 after the background
 *   outputs: 0 scores [b, max], 1 boxes [b, max, 4] (y1, x1, y2, x2), 2 classes [b, max]
 *   (int32), 3 count [b] (int32) — TFLite's order is boxes, classes, scores, count, with the
 *   classes and the count in float32: each int32 goes through CAST (29, exact below 2^24).
 * float32 only (TFLite also takes uint8 encodings and scores: declined), batch 1.
 * What neither reference fixes: the order of equal scores (LiteRT's partial sort leaves it
 * open; wick's CPU takes the lower index) — the report's note says so.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "delegates/nnapi/nnapi_map.h"

static bool option(map_ctx *c, const char *key, double dflt, bool required, double *out) {
  if (wick_delegate_graph_node_custom_option(c->g, c->node, key, out)) return true;
  if (required) DECLINE("%s without its %s option", c->op, key);
  *out = dflt;
  return true;
}

/* A float32 tensor of rank `rank` (dims[k] > 0); its dims. */
static bool float_tensor(map_ctx *c, int32_t t, size_t rank, const char *what, int32_t *dims) {
  const wick_tensor *x = nn_tensor(c, t);
  if (x == NULL) DECLINE("%s has no %s", c->op, what);
  if (wick_tensor_dtype(x) != WICK_DTYPE_FLOAT32 || wick_tensor_quantization_count(x) != 0)
    DECLINE("%s with %s %s (NNAPI's DETECTION_POSTPROCESSING takes float32)", c->op,
            wick_dtype_name(wick_tensor_dtype(x)), what);
  if (nn_rank(x) != rank) DECLINE("%s: %s of rank %zu", c->op, what, nn_rank(x));
  for (size_t d = 0; d < rank; d++) {
    dims[d] = nn_dim(x, d);
    if (dims[d] <= 0) DECLINE("%s: %s has an empty dimension", c->op, what);
  }
  return true;
}

bool nn_map_detection_postprocess(map_ctx *c) {
  NEED_LEVEL(29, "TFLite_Detection_PostProcess (NNAPI's DETECTION_POSTPROCESSING)");
  if (wick_delegate_graph_node_input_count(c->g, c->node) != 3 ||
      wick_delegate_graph_node_output_count(c->g, c->node) != 4)
    DECLINE("%s with other than 3 inputs and 4 outputs", c->op);
  double max_det, max_cls, per_class, regular, score_th, iou_th, num_classes, scale[4];
  static const char *const scale_key[4] = {"y_scale", "x_scale", "h_scale", "w_scale"};
  if (!option(c, "max_detections", 0, true, &max_det) ||
      !option(c, "max_classes_per_detection", 0, true, &max_cls) ||
      !option(c, "detections_per_class", 100, false, &per_class) ||
      !option(c, "use_regular_nms", 0, false, &regular) ||
      !option(c, "nms_score_threshold", 0, true, &score_th) ||
      !option(c, "nms_iou_threshold", 0, true, &iou_th) ||
      !option(c, "num_classes", 0, true, &num_classes))
    return false;
  for (int k = 0; k < 4; k++)
    if (!option(c, scale_key[k], 0, true, &scale[k])) return false;
  if (!(max_det >= 1 && max_det <= 1e6) || !(per_class >= 1 && per_class <= 1e6) ||
      !(num_classes >= 1 && num_classes <= 1e6))
    DECLINE("%s with max_detections %g, detections_per_class %g, num_classes %g", c->op, max_det,
            per_class, num_classes);
  if (regular == 0 && max_cls != 1)
    DECLINE(
        "%s with fast NMS and max_classes_per_detection %g (TFLite then writes that many "
        "classes per box; NNAPI's outputs hold one per detection)",
        c->op, max_cls);
  int32_t enc[3], sc[3], an[2];
  int32_t ei = nn_in_index(c, 0), si = nn_in_index(c, 1), ai = nn_in_index(c, 2);
  if (!float_tensor(c, ei, 3, "box encodings", enc) || !float_tensor(c, si, 3, "scores", sc) ||
      !float_tensor(c, ai, 2, "anchors", an))
    return false;
  if (enc[0] != 1 || sc[0] != 1) DECLINE("%s on a batch of %d", c->op, enc[0]);
  if (enc[1] != sc[1] || an[0] != enc[1] || an[1] != 4 || enc[2] < 4)
    DECLINE("%s: encodings, scores and anchors disagree on the anchors", c->op);
  if ((double)sc[2] != num_classes + 1)
    DECLINE(
        "%s with %d score columns for %g classes: NNAPI always reads column 0 as the "
        "background, and this file has none",
        c->op, sc[2], num_classes);
  const wick_tensor *anchors = nn_tensor(c, ai);
  const float *a = wick_tensor_data(anchors);
  if (!wick_tensor_is_constant(anchors) || a == NULL)
    DECLINE("%s with run-time anchors (the delegate checks them at prepare)", c->op);
  for (int32_t i = 0; i < an[0]; i++)
    if (!(a[4 * i + 2] >= 0) || !(a[4 * i + 3] >= 0))
      DECLINE("%s: anchor %d has a negative or NaN size (TFLite's invoke fails on it)", c->op, i);
  int32_t d = (int32_t)max_det;
  for (int k = 0; k < 4; k++) {
    const wick_tensor *o = nn_tensor(c, nn_out_index(c, (size_t)k));
    bool ok = o != NULL && wick_tensor_dtype(o) == WICK_DTYPE_FLOAT32 &&
              nn_rank(o) == (k == 3   ? 1u
                             : k == 0 ? 3u
                                      : 2u) &&
              nn_dim(o, 0) == 1 && (k == 3 || nn_dim(o, 1) == d) && (k != 0 || nn_dim(o, 2) == 4);
    if (!ok) DECLINE("%s: output %d is not the float32 shape NNAPI gives", c->op, k);
  }
  NOTE(
      "NNAPI's DETECTION_POSTPROCESSING (%s NMS) with its int32 classes and count CAST to "
      "float; boxes decoded in NNAPI's float arithmetic, and equal scores may come out in "
      "another order (neither TFLite nor NNAPI fixes it)",
      regular != 0 ? "regular" : "fast");
  if (c->b == NULL) return true;
  int32_t ops[14];
  ops[0] = nn_graph_operand(c, si);
  ops[1] = nn_graph_operand(c, ei);
  ops[2] = nn_graph_operand(c, ai);
  for (int k = 0; k < 4; k++) ops[3 + k] = nn_scalar_f32(c, (float)scale[k]);
  ops[7] = nn_scalar_bool(c, regular != 0);
  ops[8] = nn_scalar_i32(c, d);
  ops[9] = nn_scalar_i32(c, 1);
  ops[10] = nn_scalar_i32(c, (int32_t)per_class);
  ops[11] = nn_scalar_f32(c, (float)score_th);
  ops[12] = nn_scalar_f32(c, (float)iou_th);
  ops[13] = nn_scalar_bool(c, false);
  const nn_type i32 = {ANEURALNETWORKS_TENSOR_INT32, 0, 0};
  const uint32_t per_det[2] = {1, (uint32_t)d}, one = 1;
  int32_t outs[4];
  outs[0] = nn_graph_operand(c, nn_out_index(c, 2));
  outs[1] = nn_graph_operand(c, nn_out_index(c, 0));
  outs[2] = nn_temp_operand(c, i32, per_det, 2);
  outs[3] = nn_temp_operand(c, i32, &one, 1);
  if (!nn_operation(c, ANEURALNETWORKS_DETECTION_POSTPROCESSING, ops, 14, outs, 4)) return false;
  return nn_operation_to(c, ANEURALNETWORKS_CAST, &outs[2], 1, nn_out_index(c, 1)) &&
         nn_operation_to(c, ANEURALNETWORKS_CAST, &outs[3], 1, nn_out_index(c, 3));
}
