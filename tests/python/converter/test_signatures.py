"""Several signatures in one file sharing their weights (docs/converter.md, "Several
signatures"): ``wick.convert({"encode": (...), "decode": (...)})``.

Each signature is its own subgraph with a SignatureDef; a weight used by several signatures
is one buffer in the file.  Oracles: PyTorch eager for every signature, run on wick's runtime
(``model[key]``, ``wick.load(..., signature=key)``) and on LiteRT
(``Interpreter.get_signature_runner(key)``); the buffer sharing is read back from the file;
``wick inspect`` (the C tool) lists the signatures.
"""

from __future__ import annotations

import math
import subprocess

import numpy as np
import pytest
import torch
from torch import nn

import wick
from wick.graph.tflite_reader import read_tflite

from .util import flat_outputs, to_numpy

try:
    from ai_edge_litert.interpreter import Interpreter
except ImportError:  # pragma: no cover
    Interpreter = None

TOL = 1e-4


def _close(got, ref, what):
    assert len(got) == len(ref), what
    for g, r in zip(got, ref, strict=True):
        r = to_numpy(r)
        g = np.asarray(g)
        assert g.shape == r.shape, (what, g.shape, r.shape)
        scale = max(1.0, float(np.abs(r).max()))
        err = float(np.abs(g.astype(np.float64) - r).max())
        assert err <= TOL * scale, f"{what}: max abs err {err:.3g} > {TOL} * {scale:.3g}"


def _litert(data: bytes, key: str, sig: wick.Signature, inputs) -> list[np.ndarray]:
    runner = Interpreter(model_content=data).get_signature_runner(key)
    feed = {
        s.name: np.asarray(to_numpy(x), dtype=s.dtype)
        for s, x in zip(sig.inputs, inputs, strict=True)
    }
    out = runner(**feed)
    return [out[s.name] for s in sig.outputs]


def _check_everywhere(model: wick.Model, key: str, fn, *inputs):
    """Signature `key` of `model` on wick and on LiteRT against eager `fn(*inputs)`."""
    with torch.no_grad():
        ref = flat_outputs(fn(*inputs))
    _close(model[key].run(*inputs), ref, f"{key} on wick")
    _close(_litert(model.tflite_bytes, key, model[key], inputs), ref, f"{key} on LiteRT")
    return ref


def _buffers_by_shape(data: bytes, shape) -> dict[str, set[int]]:
    """subgraph name -> buffer indices of its constants with this shape."""
    f = read_tflite(data, stats=False)
    return {
        sg.name: {t.buffer for t in sg.tensors if t.constant and t.shape == tuple(shape)}
        for sg in f.subgraphs
    }


# ---- encoder / decoder with a shared (tied) embedding -------------------------------------------


class Seq2Seq(nn.Module):
    def __init__(self, vocab=1000, d=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)  # 256 KB: dominates the file
        self.enc = nn.Linear(d, d)
        self.dec = nn.Linear(d, d)
        self.out = nn.Linear(d, vocab, bias=False)
        self.out.weight = self.embed.weight  # tied: the decoder uses it twice

    def encode(self, ids):
        return torch.tanh(self.enc(self.embed(ids)))

    def decode(self, ids, memory):
        h = self.embed(ids) + memory.mean(1, keepdim=True)
        return self.out(torch.tanh(self.dec(h)))


def test_encoder_decoder_share_the_embedding(tmp_path):
    torch.manual_seed(0)
    m = Seq2Seq().eval()
    src = torch.randint(0, 1000, (1, 9))
    tgt = torch.randint(0, 1000, (1, 4))
    with torch.no_grad():
        memory = m.encode(src)
    model = wick.convert({"encode": (m.encode, (src,)), "decode": (m.decode, (tgt, memory))})
    assert model.signatures == ["encode", "decode"]
    assert [s.name for s in model["decode"].inputs] == ["ids", "memory"]  # the method's names
    with pytest.raises(TypeError, match="signatures"):
        model(src)  # ambiguous: which signature?

    _check_everywhere(model, "encode", m.encode, src)
    _check_everywhere(model, "decode", m.decode, tgt, memory)

    # the embedding is stored once: one buffer, used by both subgraphs
    emb = m.embed.weight.numel() * 4
    bufs = _buffers_by_shape(model.tflite_bytes, m.embed.weight.shape)
    assert set(bufs) == {"encode", "decode"}
    assert len(bufs["encode"] | bufs["decode"]) == 1, bufs
    others = sum(p.numel() * 4 for n, p in m.named_parameters() if not n.startswith("embed"))
    assert model.size < emb + others + 64 * 1024, (model.size, emb)
    separate = (
        wick.convert(_Method(m, "encode").eval(), (src,)).size
        + wick.convert(_Method(m, "decode").eval(), (tgt, memory)).size
    )
    assert model.size < separate - 0.9 * emb, (model.size, separate)

    # the file on disk: wick.load picks a signature; `wick inspect` lists them
    path = tmp_path / "s2s.tflite"
    model.export(path)
    dec = wick.load(str(path), signature="decode")
    with torch.no_grad():
        ref = m.decode(tgt, memory)
    _close(dec(tgt.numpy(), memory.numpy()), [ref], "wick.load(signature='decode')")
    _close(dec["encode"](src.numpy()), [memory], "wick.load(...)['encode']")
    assert dec.signatures == ["encode", "decode"]
    tool = wick.runtime.library_path().parent / "wick"
    if not tool.exists():
        pytest.skip("the C tool is not built")
    out = subprocess.run(
        [str(tool), "inspect", str(path)], capture_output=True, text=True, check=True
    ).stdout
    assert "signatures   2  (encode, decode)" in out, out
    out = subprocess.run(
        [str(tool), "inspect", str(path), "--signature", "decode"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "memory" in out, out


class _Method(nn.Module):
    """One method of a module as its own module (for the separate-files size comparison)."""

    def __init__(self, owner, name):
        super().__init__()
        self.owner, self.name = owner, name

    def forward(self, *args):
        return getattr(self.owner, self.name)(*args)


# ---- prefill / decode with a KV cache passed in and out -----------------------------------------


class TinyLM(nn.Module):
    """One pre-LN attention block + MLP over a fixed-size KV cache: ``prefill(ids)`` fills
    positions [0, T), ``decode(token, pos, k_cache, v_cache)`` writes position ``pos`` (a
    tensor, so one file serves every step) and attends to positions <= pos."""

    def __init__(self, vocab=512, d=32, heads=2, max_len=16):
        super().__init__()
        self.d, self.h, self.max_len = d, heads, max_len
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.o = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.lnf = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def _heads(self, t):  # [1, S, d] -> [1, h, S, d/h]
        return t.view(1, t.shape[1], self.h, self.d // self.h).transpose(1, 2)

    def _block(self, x, k_all, v_all, q, mask):
        att = (self._heads(q) @ self._heads(k_all).transpose(-1, -2)) / math.sqrt(self.d // self.h)
        att = att.masked_fill(~mask, -1e9).softmax(-1)
        ctx = (att @ self._heads(v_all)).transpose(1, 2).reshape(1, q.shape[1], self.d)
        x = x + self.o(ctx)
        x = x + self.mlp(self.ln2(x))
        return self.head(self.lnf(x))

    def prefill(self, ids):
        t = ids.shape[1]
        x = self.tok(ids) + self.pos(torch.arange(t).unsqueeze(0))
        q, k, v = self.qkv(self.ln1(x)).split(self.d, dim=-1)
        mask = torch.ones(t, t, dtype=torch.bool).tril()
        logits = self._block(x, k, v, q, mask)
        pad = (0, 0, 0, self.max_len - t)
        return logits, nn.functional.pad(k, pad), nn.functional.pad(v, pad)

    def decode(self, token, pos, k_cache, v_cache):
        x = self.tok(token) + self.pos(pos).unsqueeze(0)
        q, k, v = self.qkv(self.ln1(x)).split(self.d, dim=-1)
        here = (torch.arange(self.max_len) == pos).view(1, self.max_len, 1)
        k_cache = torch.where(here, k, k_cache)
        v_cache = torch.where(here, v, v_cache)
        mask = (torch.arange(self.max_len) <= pos).view(1, 1, 1, self.max_len)
        return self._block(x, k_cache, v_cache, q, mask), k_cache, v_cache


def test_prefill_decode_with_kv_state():
    torch.manual_seed(0)
    m = TinyLM().eval()
    prompt = torch.randint(0, 512, (1, 6))
    with torch.no_grad():
        _, k0, v0 = m.prefill(prompt)
    token, pos = torch.tensor([[7]]), torch.tensor([6])
    model = wick.convert(
        {
            "prefill": (m.prefill, (prompt,)),
            "decode": (m.decode, (token, pos, k0, v0)),
        }
    )
    assert model.signatures == ["prefill", "decode"]
    _check_everywhere(model, "prefill", m.prefill, prompt)

    # every weight is shared: the file holds each parameter about once
    params = sum(p.numel() * 4 for p in m.parameters())
    assert model.size < 1.3 * params + 64 * 1024, (model.size, params)
    f = read_tflite(model.tflite_bytes, stats=False)
    big = {sg.name: {t.buffer for t in sg.tensors if t.nbytes >= 4096} for sg in f.subgraphs}
    assert big["prefill"] == big["decode"] and len(big["decode"]) >= 4, big  # the same buffers

    # three greedy decode steps, each runtime carrying its own cache from its own prefill
    with torch.no_grad():
        ref_logits, k_ref, v_ref = m.prefill(prompt)
    runs = {"wick": model["prefill"](prompt), "litert": None}
    runs["litert"] = _litert(model.tflite_bytes, "prefill", model["prefill"], [prompt])
    state = {name: (r[1], r[2]) for name, r in runs.items()}
    tok = torch.tensor([[int(ref_logits[0, -1].argmax())]])
    for step in range(3):
        p = torch.tensor([6 + step])
        with torch.no_grad():
            ref = m.decode(tok, p, k_ref, v_ref)
        for name, (k, v) in state.items():
            if name == "wick":
                got = model["decode"].run(tok, p, k, v)
            else:
                got = _litert(model.tflite_bytes, "decode", model["decode"], [tok, p, k, v])
            _close(got, ref, f"decode step {step} on {name}")
            state[name] = (got[1], got[2])
        k_ref, v_ref = ref[1], ref[2]
        tok = torch.tensor([[int(ref[0][0, -1].argmax())]])


def test_signature_arguments_are_checked():
    m = Seq2Seq().eval()
    ids = torch.randint(0, 1000, (1, 3))
    with pytest.raises(TypeError, match="each its inputs"):
        wick.convert({"encode": (m.encode, (ids,))}, (ids,))
    with pytest.raises(TypeError, match="expected \\(module, args\\)"):
        wick.convert({"encode": m.encode})
    with pytest.raises(TypeError, match="keyed by the signatures"):
        wick.convert({"encode": (m.encode, (ids,))}, dynamic_shapes={"other": None})
    model = wick.convert({"encode": (m.encode, (ids,))})
    with pytest.raises(KeyError, match="encode"):
        model["decode"]
    _close(model.run(ids), [m.encode(ids)], "a single named signature is callable directly")
