"""Graph passes.  Each module states the one invariant it establishes.

ATen-level (on ir.Graph, before lowering):
    const_fold   every node whose inputs are all known is replaced by a constant
    batchnorm    inference batch-norm after a convolution is folded into its weights
    dce          only nodes that reach an output remain
    int_range    integer Values carry a proven value range (int64 -> int32 where it fits)

TFLite-level (on lower.tfl.TGraph, after lowering):
    tfl_fold     ops whose inputs are all constant become constants (weight layouts land here)
    layout       transposes sink/cancel: CNNs keep TRANSPOSE only at their boundaries
    fuse         RELU/RELU6/RELU_N1_TO_1 fold into the producing op's fused activation
    cleanup      identity reshapes/transposes vanish, reshape chains collapse, dead ops go
"""
