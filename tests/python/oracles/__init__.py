"""Test oracles for wick: Keras-built .tflite files (keras_models) and LiteRT runs (litert).

See README.md in this folder.
"""
