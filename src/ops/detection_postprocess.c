/*
 * detection_postprocess.c — TFLite_Detection_PostProcess, the custom op that
 * ends SSD detectors (registered in LiteRT's BuiltinOpResolver): decodes box
 * encodings against anchors, then keeps the best non-overlapping boxes by
 * non-maximum suppression (NMS).
 *
 * Inputs: box_encodings [1, N, >= 4] (y, x, h, w first), class_predictions
 * [1, N, C'] (C' = num_classes, or num_classes + 1 with a leading background
 * column that is skipped), anchors [N, 4] (y, x, h, w). float32, or uint8
 * with per-tensor scale/zero point (encodings and anchors both, dequantized as
 * (q - zero_point) * scale in float).
 * Outputs (float32, D = max_detections * max_classes_per_detection):
 * boxes [1, D, 4] (ymin, xmin, ymax, xmax), classes [1, D], scores [1, D],
 * num_detections [1].
 *
 * Decoding (in double, rounded to float, as LiteRT): yc = y / y_scale * ah +
 * ay, xc = x / x_scale * aw + ax, half_h = 0.5 * exp(h / h_scale) * ah,
 * half_w likewise; box = (yc - half_h, xc - half_w, yc + half_h, xc + half_w).
 * A decoded box with ymin > ymax or xmin > xmax fails the invoke, as in LiteRT.
 *
 * Single-class NMS (both modes): the boxes scoring >= nms_score_threshold,
 * by decreasing score; take the next active one while fewer than the limit
 * are taken, deactivate every later one whose IoU with it exceeds
 * nms_iou_threshold (IoU 0 when either box has area <= 0).
 *   fast (use_regular_nms false): each box's top min(max_classes_per_detection,
 *     num_classes) classes; NMS on each box's best score with limit
 *     max_detections; detection k fills slots k * max_classes_per_detection + j.
 *   regular: NMS per class with limit detections_per_class; after each class
 *     the running list keeps its best max_detections (box, class) entries.
 * Ties: LiteRT's sorts leave the order of equal scores unspecified
 * (std::partial_sort); wick breaks ties by the lower index (box, class, or
 * earlier entry), so its output is deterministic.
 * Slots past the detections are zero (LiteRT leaves them unwritten).
 *
 * Options: a FlexBuffers map (src/format/flexbuffer.h). max_detections,
 * max_classes_per_detection, nms_score_threshold, nms_iou_threshold,
 * num_classes and y/x/h/w_scale are required; detections_per_class defaults
 * to 100 and use_regular_nms to false. LiteRT reads a missing key as 0; wick
 * refuses it instead, as no producer leaves them out.
 */
#include <math.h>
#include <string.h>

#include "format/flexbuffer.h"
#include "format/schema.h"
#include "ops/op_common.h"

typedef struct detect_data {
  int32_t max_detections, max_classes, detections_per_class, num_classes;
  bool regular;
  float score_threshold, iou_threshold;
  double scale_y, scale_x, scale_h, scale_w;
  int32_t num_boxes, box_len, score_cols, categories; /* N, encoding length, C', per anchor */
  size_t scratch_floats;
} detect_data;

/* ---------------------------------------------------------------- options */

static wick_status opt_float(const wick_op_ctx *ctx, const wick_flex_map *m, const char *key,
                             double *out) {
  wick_flex_status st = wick_flex_map_float(m, key, out);
  if (st != WICK_FLEX_OK) return wick_op_flex_fail(ctx, key, st);
  *out = (float)*out; /* LiteRT keeps these as float */
  return WICK_OK;
}

static wick_status read_options(const wick_op_ctx *ctx, detect_data *d) {
  wick_flex_map m;
  WICK_TRY(wick_op_flex_options(ctx, &m));
  wick_flex_status st;
  WICK_TRY(wick_op_flex_int32(ctx, &m, "max_detections", -1, &d->max_detections));
  WICK_TRY(wick_op_flex_int32(ctx, &m, "max_classes_per_detection", -1, &d->max_classes));
  WICK_TRY(wick_op_flex_int32(ctx, &m, "detections_per_class", 100, &d->detections_per_class));
  WICK_TRY(wick_op_flex_int32(ctx, &m, "num_classes", -1, &d->num_classes));
  bool regular = false;
  st = wick_flex_map_bool(&m, "use_regular_nms", &regular);
  if (st != WICK_FLEX_OK && st != WICK_FLEX_ABSENT)
    return wick_op_flex_fail(ctx, "use_regular_nms", st);
  d->regular = regular;
  double score, iou;
  WICK_TRY(opt_float(ctx, &m, "nms_score_threshold", &score));
  WICK_TRY(opt_float(ctx, &m, "nms_iou_threshold", &iou));
  WICK_TRY(opt_float(ctx, &m, "y_scale", &d->scale_y));
  WICK_TRY(opt_float(ctx, &m, "x_scale", &d->scale_x));
  WICK_TRY(opt_float(ctx, &m, "h_scale", &d->scale_h));
  WICK_TRY(opt_float(ctx, &m, "w_scale", &d->scale_w));
  d->score_threshold = (float)score;
  d->iou_threshold = (float)iou;
  WICK_CHECK(ctx, d->max_detections >= 0, "max_detections %d is negative", d->max_detections);
  WICK_CHECK(ctx, d->max_classes > 0, "max_classes_per_detection %d must be positive",
             d->max_classes);
  WICK_CHECK(ctx, !d->regular || d->detections_per_class > 0,
             "detections_per_class %d must be positive", d->detections_per_class);
  WICK_CHECK(ctx, d->num_classes > 0, "num_classes %d must be positive", d->num_classes);
  WICK_CHECK(ctx, d->iou_threshold > 0.0f && d->iou_threshold <= 1.0f,
             "nms_iou_threshold %g is outside (0, 1]", (double)d->iou_threshold);
  return WICK_OK;
}

/* ---------------------------------------------------------------- prepare */

static wick_status check_type(const wick_op_ctx *ctx, const wick_tensor *t, const char *what) {
  if (t->type == WICK_DTYPE_FLOAT32) return WICK_OK;
  WICK_CHECK_SUPPORTED(ctx, t->type == WICK_DTYPE_UINT8, "%s must be float32 or uint8, not %s",
                       what, wick_dtype_name(t->type));
  WICK_CHECK(ctx, t->info->quant.count >= 1, "%s is uint8 without a scale and zero point", what);
  return WICK_OK;
}

static wick_status detect_prepare(wick_op_ctx *ctx) {
  WICK_TRY(wick_check_arity(ctx, 3, 3, 4));
  detect_data *d = wick_op_alloc(ctx, sizeof *d);
  if (d == NULL) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "out of memory");
  memset(d, 0, sizeof *d);
  WICK_TRY(read_options(ctx, d));
  wick_tensor *boxes, *scores, *anchors;
  WICK_TRY(wick_require_input(ctx, 0, &boxes));
  WICK_TRY(wick_require_input(ctx, 1, &scores));
  WICK_TRY(wick_require_input(ctx, 2, &anchors));
  WICK_CHECK(ctx, boxes->rank == 3 && boxes->dims[0] == 1 && boxes->dims[2] >= 4,
             "box_encodings must be [1, boxes, >= 4]");
  const int32_t n = boxes->dims[1];
  WICK_CHECK(ctx, scores->rank == 3 && scores->dims[0] == 1 && scores->dims[1] == n,
             "class_predictions must be [1, %d, classes]", n);
  WICK_CHECK(ctx, anchors->rank == 2 && anchors->dims[0] == n && anchors->dims[1] == 4,
             "anchors must be [%d, 4]", n);
  WICK_CHECK(ctx, scores->dims[2] == d->num_classes || scores->dims[2] == d->num_classes + 1,
             "class_predictions have %d columns; num_classes %d needs %d or %d (with background)",
             scores->dims[2], d->num_classes, d->num_classes, d->num_classes + 1);
  WICK_TRY(check_type(ctx, boxes, "box_encodings"));
  WICK_TRY(check_type(ctx, scores, "class_predictions"));
  WICK_TRY(check_type(ctx, anchors, "anchors"));
  WICK_CHECK(ctx, anchors->type == boxes->type,
             "anchors (%s) must have the type of box_encodings (%s)",
             wick_dtype_name(anchors->type), wick_dtype_name(boxes->type));
  d->num_boxes = n;
  d->box_len = boxes->dims[2];
  d->score_cols = scores->dims[2];
  d->categories = d->max_classes < d->num_classes ? d->max_classes : d->num_classes;
  int64_t slots;
  WICK_CHECK(ctx, wick_mul_i64(d->max_detections, d->max_classes, &slots) && slots <= INT32_MAX,
             "max_detections %d x max_classes_per_detection %d overflows", d->max_detections,
             d->max_classes);
  const int32_t box_dims[3] = {1, (int32_t)slots, 4}, vec_dims[2] = {1, (int32_t)slots};
  const int32_t one = 1;
  WICK_TRY(wick_op_set_output(ctx, 0, WICK_DTYPE_FLOAT32, 3, box_dims));
  WICK_TRY(wick_op_set_output(ctx, 1, WICK_DTYPE_FLOAT32, 2, vec_dims));
  WICK_TRY(wick_op_set_output(ctx, 2, WICK_DTYPE_FLOAT32, 2, vec_dims));
  WICK_TRY(wick_op_set_output(ctx, 3, WICK_DTYPE_FLOAT32, 1, &one));
  /* Scratch in 4-byte words: decoded boxes 4N, dequantized scores N*C',
   * NMS 6N (kept indices and scores, order, merge buffer, active, selected),
   * then regular: class scores N, the running list and its sort 5(N + D)
   * and the kept entries 2D; fast:
   * best scores N and top classes N * categories. */
  int64_t nn = n, md = d->max_detections, words = 10 * nn, t;
  bool ok = true;
  if (scores->type == WICK_DTYPE_UINT8)
    ok = ok && wick_mul_i64(nn, d->score_cols, &t) && wick_add_i64(words, t, &words);
  if (d->regular)
    ok = ok && wick_add_i64(words, 6 * nn + 7 * md, &words);
  else
    ok = ok && wick_mul_i64(nn + 1, d->categories, &t) && wick_add_i64(words, nn + t, &words);
  size_t bytes;
  ok = ok && wick_mul_size((size_t)words, 4, &bytes);
  if (!ok) return wick_op_fail(ctx, WICK_ERR_OUT_OF_MEMORY, "the scratch size overflows");
  wick_op_request_scratch(ctx, bytes);
  wick_op_set_data(ctx, d);
  return WICK_OK;
}

/* ---------------------------------------------------------------- invoke */

typedef struct box {
  float ymin, xmin, ymax, xmax;
} box;

static inline float dequant(const wick_tensor *t, uint8_t q) {
  return ((float)q - (float)(int32_t)t->info->quant.zero_point[0]) * t->info->quant.scale[0];
}

/* One coordinate of input t's row i (float32 or uint8). */
static inline float coord(const wick_tensor *t, int64_t row_len, int64_t i, int k) {
  if (t->type == WICK_DTYPE_UINT8) return dequant(t, ((const uint8_t *)t->data)[i * row_len + k]);
  return ((const float *)t->data)[i * row_len + k];
}

static void decode(const detect_data *d, const wick_tensor *enc, const wick_tensor *anc, box *out) {
  for (int64_t i = 0; i < d->num_boxes; i++) {
    double y = coord(enc, d->box_len, i, 0), x = coord(enc, d->box_len, i, 1);
    double h = coord(enc, d->box_len, i, 2), w = coord(enc, d->box_len, i, 3);
    double ay = coord(anc, 4, i, 0), ax = coord(anc, 4, i, 1);
    double ah = coord(anc, 4, i, 2), aw = coord(anc, 4, i, 3);
    float yc = (float)(y / d->scale_y * ah + ay), xc = (float)(x / d->scale_x * aw + ax);
    float hh = (float)(0.5 * exp(h / d->scale_h) * ah),
          hw = (float)(0.5 * exp(w / d->scale_w) * aw);
    out[i] = (box){yc - hh, xc - hw, yc + hh, xc + hw};
  }
}

static float iou(const box *a, const box *b) {
  const float area_a = (a->ymax - a->ymin) * (a->xmax - a->xmin);
  const float area_b = (b->ymax - b->ymin) * (b->xmax - b->xmin);
  if (area_a <= 0 || area_b <= 0) return 0.0f;
  const float ih = fmaxf(fminf(a->ymax, b->ymax) - fmaxf(a->ymin, b->ymin), 0.0f);
  const float iw = fmaxf(fminf(a->xmax, b->xmax) - fmaxf(a->xmin, b->xmin), 0.0f);
  const float inter = ih * iw;
  return inter / (area_a + area_b - inter);
}

/* Sorts idx[0..n) by decreasing values[idx], equal values keeping their
 * order (a merge sort; tmp holds n). */
static void sort_desc(int32_t *idx, int32_t *tmp, size_t n, const float *values) {
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      size_t a = lo, b = mid, k = lo;
      while (a < mid && b < hi) tmp[k++] = values[idx[b]] > values[idx[a]] ? idx[b++] : idx[a++];
      while (a < mid) tmp[k++] = idx[a++];
      while (b < hi) tmp[k++] = idx[b++];
    }
    memcpy(idx, tmp, n * sizeof *idx);
  }
}

typedef struct nms_scratch {
  int32_t *keep, *order, *tmp, *active, *selected;
  float *keep_scores;
} nms_scratch;

/* Single-class NMS over scores[0..N): writes the chosen box indices to
 * s->selected in order and returns their count. */
static int32_t nms(const detect_data *d, const box *boxes, const float *scores, int32_t limit,
                   const nms_scratch *s) {
  int32_t kept = 0;
  for (int32_t i = 0; i < d->num_boxes; i++)
    if (scores[i] >= d->score_threshold) {
      s->keep[kept] = i;
      s->keep_scores[kept] = scores[i];
      s->order[kept] = kept;
      kept++;
    }
  sort_desc(s->order, s->tmp, (size_t)kept, s->keep_scores);
  for (int32_t i = 0; i < kept; i++) s->active[i] = 1;
  int32_t count = 0, active = kept;
  for (int32_t i = 0; i < kept && active > 0 && count < limit; i++) {
    if (!s->active[i]) continue;
    const box *bi = &boxes[s->keep[s->order[i]]];
    s->selected[count++] = s->keep[s->order[i]];
    s->active[i] = 0;
    active--;
    for (int32_t j = i + 1; j < kept; j++)
      if (s->active[j] && iou(bi, &boxes[s->keep[s->order[j]]]) > d->iou_threshold) {
        s->active[j] = 0;
        active--;
      }
  }
  return count;
}

typedef struct outputs {
  float *boxes, *classes, *scores;
} outputs;

static void put(const outputs *o, int64_t slot, const box *b, int32_t cls, float score) {
  memcpy(o->boxes + 4 * slot, b, sizeof *b);
  o->classes[slot] = (float)cls;
  o->scores[slot] = score;
}

static int32_t fast_nms(const detect_data *d, const box *boxes, const float *scores,
                        const nms_scratch *s, float *words, const outputs *o) {
  const int32_t n = d->num_boxes, cats = d->categories, off = d->score_cols - d->num_classes;
  float *best = words;
  int32_t *top = (int32_t *)(words + n); /* n * cats class indices */
  for (int64_t r = 0; r < n; r++) {
    const float *row = scores + r * d->score_cols + off;
    int32_t *t = top + r * cats;
    /* The top `cats` classes by decreasing score, lower class first on ties
     * (insertion into a sorted list; with one class, LiteRT's first arg max). */
    int32_t len = 0;
    for (int32_t c = 0; c < d->num_classes; c++) {
      if (len == cats && !(row[c] > row[t[len - 1]])) continue;
      int32_t p = 0;
      while (p < len && !(row[c] > row[t[p]])) p++;
      if (len < cats) len++;
      for (int32_t j = len - 1; j > p; j--) t[j] = t[j - 1];
      t[p] = c;
    }
    best[r] = row[t[0]];
  }
  int32_t count = nms(d, boxes, best, d->max_detections, s);
  for (int32_t k = 0; k < count; k++) {
    const int32_t b = s->selected[k];
    const float *row = scores + (int64_t)b * d->score_cols + off;
    for (int32_t j = 0; j < cats; j++) {
      const int32_t c = top[(int64_t)b * cats + j];
      put(o, (int64_t)k * d->max_classes + j, &boxes[b], c, row[c]);
    }
  }
  return count;
}

static int32_t regular_nms(const detect_data *d, const box *boxes, const float *scores,
                           const nms_scratch *s, float *words, const outputs *o) {
  const int32_t n = d->num_boxes, md = d->max_detections, off = d->score_cols - d->num_classes;
  const size_t cap = (size_t)n + (size_t)md;
  float *class_scores = words, *list_scores = words + n;
  int32_t *list_box = (int32_t *)(list_scores + cap), *list_class = list_box + cap;
  int32_t *order = list_class + cap, *tmp = order + cap;
  float *kept_scores = (float *)(tmp + cap);
  int32_t *kept_box = (int32_t *)(kept_scores + md), *kept_class = NULL;
  int32_t size = 0;
  for (int32_t c = 0; c < d->num_classes; c++) {
    for (int64_t r = 0; r < n; r++) class_scores[r] = scores[r * d->score_cols + off + c];
    int32_t count = nms(d, boxes, class_scores, d->detections_per_class, s);
    int32_t total = size;
    for (int32_t k = 0; k < count; k++, total++) {
      list_box[total] = s->selected[k];
      list_class[total] = c;
      list_scores[total] = class_scores[s->selected[k]];
    }
    for (int32_t k = 0; k < total; k++) order[k] = k;
    sort_desc(order, tmp, (size_t)total, list_scores);
    size = total < md ? total : md;
    /* Keep the best `size` entries, in order (reuse tmp for the classes). */
    kept_class = tmp;
    for (int32_t k = 0; k < size; k++) {
      kept_scores[k] = list_scores[order[k]];
      kept_box[k] = list_box[order[k]];
      kept_class[k] = list_class[order[k]];
    }
    for (int32_t k = 0; k < size; k++) {
      list_scores[k] = kept_scores[k];
      list_box[k] = kept_box[k];
      list_class[k] = kept_class[k];
    }
  }
  for (int32_t k = 0; k < size; k++) put(o, k, &boxes[list_box[k]], list_class[k], list_scores[k]);
  return size;
}

static wick_status detect_invoke(wick_op_ctx *ctx) {
  const detect_data *d = wick_op_data(ctx);
  const wick_tensor *enc = wick_op_input(ctx, 0), *cls = wick_op_input(ctx, 1);
  const wick_tensor *anc = wick_op_input(ctx, 2);
  const int32_t n = d->num_boxes;
  outputs o = {wick_op_output(ctx, 0)->data, wick_op_output(ctx, 1)->data,
               wick_op_output(ctx, 2)->data};
  const size_t slots = (size_t)d->max_detections * (size_t)d->max_classes;
  memset(o.boxes, 0, slots * 4 * sizeof(float));
  memset(o.classes, 0, slots * sizeof(float));
  memset(o.scores, 0, slots * sizeof(float));
  float *num = wick_op_output(ctx, 3)->data;
  *num = 0.0f;
  if (n == 0) return WICK_OK; /* no boxes, no scratch */
  float *w = wick_op_scratch(ctx);
  box *boxes = (box *)w;
  w += 4 * (size_t)n;
  decode(d, enc, anc, boxes);
  const float *scores = cls->data;
  if (cls->type == WICK_DTYPE_UINT8) {
    const size_t count = (size_t)n * (size_t)d->score_cols;
    for (size_t i = 0; i < count; i++) w[i] = dequant(cls, ((const uint8_t *)cls->data)[i]);
    scores = w;
    w += count;
  }
  for (int32_t i = 0; i < n; i++)
    if (boxes[i].ymin > boxes[i].ymax || boxes[i].xmin > boxes[i].xmax)
      return wick_op_fail(ctx, WICK_ERR_INVALID_INPUT,
                          "decoded box %d has ymin > ymax or xmin > xmax (a negative anchor "
                          "height or width?)",
                          i);
  nms_scratch s;
  s.keep = (int32_t *)w;
  s.keep_scores = w + n;
  s.order = (int32_t *)(w + 2 * (size_t)n);
  s.tmp = s.order + n;
  s.active = s.tmp + n;
  s.selected = s.active + n;
  w += 6 * (size_t)n;
  int32_t count =
      d->regular ? regular_nms(d, boxes, scores, &s, w, &o) : fast_nms(d, boxes, scores, &s, w, &o);
  *num = (float)count;
  return WICK_OK;
}

const wick_op_def wick_op_detection_postprocess = {
    "TFLite_Detection_PostProcess", WICK_BUILTIN_CUSTOM, 1, detect_prepare, detect_invoke, 0};
