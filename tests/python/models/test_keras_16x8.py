"""A 16x8 file from TensorFlow's converter (int16 activations, int8 weights:
``EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8``), run on wick and compared with
LiteRT's reference kernels (``BUILTIN_REF``) bit for bit.

The model chains the int16 ops that mode produces for a small CNN head: QUANTIZE, CONV_2D, int16
LOGISTIC and TANH (whose input scales TensorFlow picks, so not the power-of-two special cases),
MEAN, FULLY_CONNECTED and DEQUANTIZE.
"""

from __future__ import annotations

import contextlib
import io

import numpy as np
from ai_edge_litert.interpreter import Interpreter

import wick
from tests.python.oracles.keras_models import _import_tf
from tests.python.oracles.litert import run_litert


def _convert_16x8(seed: int) -> bytes:
    tf, keras = _import_tf()
    keras.backend.clear_session()
    keras.utils.set_random_seed(seed)
    x = keras.Input((12, 12, 3))
    h = keras.layers.Conv2D(8, 3, padding="same")(x)
    h = keras.layers.Activation("sigmoid")(h)
    h = keras.layers.Conv2D(8, 3, padding="same", activation="tanh")(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    h = keras.layers.Dense(16)(h)
    h = keras.layers.Activation("tanh")(h)
    y = keras.layers.Dense(4, activation="sigmoid")(h)
    conv = tf.lite.TFLiteConverter.from_keras_model(keras.Model(x, y))
    rng = np.random.default_rng(seed)

    def representative():
        for _ in range(8):
            yield [rng.uniform(-1.0, 1.0, (1, 12, 12, 3)).astype(np.float32)]

    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = representative
    conv.target_spec.supported_ops = [
        tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8
    ]
    with contextlib.redirect_stdout(io.StringIO()):
        return conv.convert()


def test_keras_16x8_cnn_is_bit_exact_with_litert_reference():
    data = _convert_16x8(seed=3)
    ops = {d["op_name"] for d in Interpreter(model_content=data)._get_ops_details()}
    assert {"LOGISTIC", "TANH", "CONV_2D", "FULLY_CONNECTED"} <= ops, ops
    rt = wick.load(data)
    rng = np.random.default_rng(1)
    for _ in range(4):
        x = rng.uniform(-1.5, 1.5, (1, 12, 12, 3)).astype(np.float32)
        ref = run_litert(data, [x], reference=True)
        got = rt(x)
        assert np.asarray(got[0]).tobytes() == np.asarray(ref[0]).tobytes()
