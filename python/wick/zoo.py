"""Models with random weights that still behave like trained ones.

Nothing can be downloaded here, so models are built with random weights. Default
initialisation makes a poor test subject: torchvision's MobileNetV2 with
``weights=None`` outputs logits of about 1e-9 (BatchNorm layers with unit
variance and kaiming-initialised convolutions shrink the signal at every block),
so any error bar of the form ``rel * max(1, max|ref|)`` would pass even an
all-zero output. :func:`realistic_init_` gives every normalisation layer random
statistics and affine parameters of order one, which keeps activations at a
healthy scale through deep networks (MobileNetV2 logits become ~0.2).
"""

from __future__ import annotations

import torch

__all__ = ["realistic_init_", "torchvision_model"]

_NORMS = (
    torch.nn.modules.batchnorm._BatchNorm,
    torch.nn.GroupNorm,
    torch.nn.LayerNorm,
    torch.nn.modules.instancenorm._InstanceNorm,
)


@torch.no_grad()
def realistic_init_(model: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    """Randomises normalisation statistics and affine parameters in place; returns `model`."""
    g = torch.Generator().manual_seed(seed)
    for mod in model.modules():
        if not isinstance(mod, _NORMS):
            continue
        if getattr(mod, "running_mean", None) is not None:
            n = mod.running_mean.numel()
            mod.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
            mod.running_var.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
        if getattr(mod, "weight", None) is not None:
            w = mod.weight
            w.copy_(torch.rand(w.shape, generator=g) * 0.5 + 0.75)
        if getattr(mod, "bias", None) is not None:
            b = mod.bias
            b.copy_(torch.randn(b.shape, generator=g) * 0.1)
    return model


def torchvision_model(name: str, seed: int = 0) -> torch.nn.Module:
    """A torchvision builder's model in eval mode with seeded, realistic random weights."""
    import torchvision

    torch.manual_seed(seed)
    model = torchvision.models.get_model(name, weights=None).eval()
    return realistic_init_(model, seed)
