"""The `wick graph` page in a real browser: headless Chromium (Debian's `chromium`) driven over
the DevTools protocol (browser.py, stdlib only).

Each page is generated, loaded from a file:// URL with no network, and checked: as many
rendered operator nodes (``[data-op]``) as the model has operators, search through the real
input box finds a known op and centers it, clicking shows details, expanding a composite draws
its decomposition, wheel zoom works, no console error or uncaught exception (collected both by
DevTools and by a ``window.__errors`` collector injected before the page's own scripts), and a
screenshot is saved under build/test-artifacts/graph/ for a human to look at.

Skipped with a message when chromium or Graphviz is absent; CI installs both (Debian packages
``chromium`` and ``graphviz``).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from tests.python.graph import models
from tests.python.graph.browser import Browser, find_chromium
from wick import graph as wg
from wick.graph.tflite_reader import read_tflite

REPO = Path(__file__).resolve().parents[3]
ARTIFACTS = REPO / "build" / "test-artifacts" / "graph"
SHARED = REPO.parent / "shared" / "models"

pytestmark = [
    pytest.mark.skipif(
        find_chromium() is None,
        reason="chromium not installed (Debian: apt-get install chromium; or set WICK_CHROMIUM)",
    ),
    pytest.mark.skipif(
        shutil.which("dot") is None and not os.environ.get("WICK_DOT"),
        reason="Graphviz `dot` not installed (Debian: apt-get install graphviz)",
    ),
]

COLLECTOR = """
window.__errors = [];
window.addEventListener("error", function (e) { window.__errors.push(String(e.message || e)); });
window.addEventListener("unhandledrejection", function (e) { window.__errors.push(String(e.reason)); });
(function () { var f = console.error; console.error = function () {
  window.__errors.push(Array.prototype.join.call(arguments, " ")); return f.apply(console, arguments); }; })();
"""


@pytest.fixture(scope="module")
def browser():
    with Browser(1400, 900) as b:
        b.call("Page.addScriptToEvaluateOnNewDocument", source=COLLECTOR)
        yield b


def load(b: Browser, page: Path) -> dict:
    b.errors.clear()
    secs = b.open(page)
    deadline = time.monotonic() + 30
    while b.eval("document.documentElement.getAttribute('data-ready')") != "1":
        assert time.monotonic() < deadline, "the page never finished drawing"
        time.sleep(0.05)
    return {"load_s": secs, "ready_ms": b.eval("window.__wick.readyMs")}


def no_errors(b: Browser) -> None:
    assert b.errors == []
    assert b.eval("window.__errors") == []
    assert b.eval("window.__wickErrors") == []


def shot(b: Browser, name: str) -> Path:
    return b.screenshot(ARTIFACTS / f"{name}.png")


def op_count(b: Browser, depth: int = 0) -> int:
    return b.eval(
        f"document.querySelectorAll('#viewport [data-op][data-depth=\"{depth}\"]').length"
    )


def type_search(b: Browser, text: str) -> None:
    b.eval("document.getElementById('q').focus()")
    b.call("Input.insertText", text=text)
    time.sleep(0.2)  # the box searches 60 ms after the last keystroke


def press(b: Browser, key: str, code: str, keycode: int) -> None:
    for kind in ("rawKeyDown", "keyUp"):
        b.call(
            "Input.dispatchKeyEvent",
            type=kind,
            key=key,
            code=code,
            windowsVirtualKeyCode=keycode,
            text="\r" if kind == "rawKeyDown" and key == "Enter" else "",
        )


def click_node(b: Browser, key: str) -> None:
    r = b.eval(
        f"""(function () {{ var r = document.querySelector('[data-key="{key}"] rect').getBoundingClientRect();
            return [r.x + r.width / 2, r.y + r.height / 2]; }})()"""
    )
    for kind in ("mousePressed", "mouseReleased"):
        b.call("Input.dispatchMouseEvent", type=kind, x=r[0], y=r[1], button="left", clickCount=1)


@pytest.fixture(scope="module")
def tiny_cnn():
    from tests.python.oracles import keras_models

    return Path(keras_models.get_model_path("tiny_cnn"))


def test_tflite_page_renders_all_ops_search_details_zoom(browser, tiny_cnn, tmp_path):
    page = wg.visualize(tiny_cnn, tmp_path / "tiny_cnn.html")
    load(browser, page)
    f = read_tflite(tiny_cnn.read_bytes(), stats=False)
    n_ops = len(f.subgraphs[0].operators)
    assert op_count(browser) == n_ops
    assert browser.eval("document.querySelectorAll('#viewport [data-io]').length") == 2
    assert browser.eval("document.querySelectorAll('#viewport .e').length") > n_ops - 1
    assert browser.eval("document.querySelectorAll('#viewport .el').length") > 0  # edge labels

    # search through the real box: matches are marked, Enter centers and selects the first
    type_search(browser, "depthwise")
    assert browser.eval("document.querySelectorAll('#viewport .n.match').length") == 1
    assert browser.eval("document.getElementById('qn').textContent") == "1"
    press(browser, "Enter", "Enter", 13)
    state = browser.eval("window.__wick.state()")
    assert state["cur"] == 0 and state["selected"] is not None
    assert browser.eval("document.querySelector('#panel h2').textContent").startswith(
        "DEPTHWISE_CONV_2D"
    )
    box = browser.eval(
        f"""(function () {{ var r = document.querySelector('[data-key="{state["selected"]}"] rect')
            .getBoundingClientRect(); var c = document.getElementById('canvas').getBoundingClientRect();
            return [r.x + r.width / 2 - c.x - c.width / 2, r.y + r.height / 2 - c.y - c.height / 2]; }})()"""
    )
    assert abs(box[0]) < 3 and abs(box[1]) < 3  # centered
    shot(browser, "tiny_cnn_search")

    # clicking a node shows its details: options and weight statistics of its constants
    press(browser, "Escape", "Escape", 27)
    conv = next(o.index for o in f.subgraphs[0].operators if o.op == "CONV_2D")
    click_node(browser, f"op{conv}")
    panel = browser.eval("document.getElementById('panel').innerText")
    assert "CONV_2D" in panel and "padding" in panel and "mean ± std" in panel

    # wheel zoom changes the scale
    k0 = browser.eval("window.__wick.state().k")
    browser.call("Input.dispatchMouseEvent", type="mouseWheel", x=400, y=400, deltaX=0, deltaY=-300)
    time.sleep(0.1)
    assert browser.eval("window.__wick.state().k") > k0
    no_errors(browser)
    shot(browser, "tiny_cnn_details")


def test_composite_expands_in_place(browser, tmp_path):
    model = SHARED / "l2_norm_composite.tflite"
    if not model.exists():
        pytest.skip(f"{model} absent")
    page = wg.visualize(model, tmp_path / "composite.html")
    load(browser, page)
    assert op_count(browser) == 1
    assert op_count(browser, 1) == 0
    browser.eval(
        "document.querySelector('[data-toggle=\"op0\"]').dispatchEvent(new MouseEvent('click', {bubbles: true}))"
    )
    assert op_count(browser, 1) == 5  # the decomposition's MUL SUM ADD RSQRT MUL
    assert op_count(browser) == 1  # the composite is still one operator (now a frame)
    # search reaches into subgraphs, and collapsing hides them again
    assert browser.eval("window.__wick.search('RSQRT')") == 1
    browser.eval("window.__wick.toggle('op0')")
    assert op_count(browser, 1) == 0
    browser.eval("window.__wick.step(1)")  # going to a match inside expands its parent
    assert op_count(browser, 1) == 5
    no_errors(browser)
    shot(browser, "l2_norm_composite_expanded")


def test_control_flow_and_quantized_highlights(browser, tmp_path):
    page = wg.visualize(models.while_model(), tmp_path / "while.html")
    load(browser, page)
    assert op_count(browser) == 2
    browser.eval("window.__wick.toggle('op0')")
    assert op_count(browser, 1) == 3  # cond: LESS; body: ADD, ADD
    assert browser.eval("document.querySelectorAll('.fr').length") == 1
    no_errors(browser)
    shot(browser, "while_expanded")

    page = wg.visualize(models.float_island_model(), tmp_path / "island.html")
    load(browser, page)
    assert browser.eval("document.querySelectorAll('.hl-float .t-float-island').length") == 1
    assert browser.eval("document.querySelectorAll('.hl-qdq .t-qdq').length") == 4
    assert browser.eval("document.querySelectorAll('.hl-transpose .t-transpose').length") == 1
    no_errors(browser)
    shot(browser, "float_island")


def test_profile_heat_and_exported_program(browser, tiny_cnn, tmp_path):
    import subprocess
    import sys

    trace = tmp_path / "trace.json"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "wick.cli",
            "bench",
            str(tiny_cnn),
            "--runs",
            "2",
            "--trace",
            str(trace),
        ],
        capture_output=True,
        timeout=300,
    )
    if p.returncode != 0:
        pytest.skip("wick bench is not available")
    page = wg.visualize(tiny_cnn, tmp_path / "profile.html", profile=trace)
    load(browser, page)
    assert browser.eval("document.getElementById('canvas').classList.contains('heat')")
    n_ops = len(json.loads(trace.read_text())["traceEvents"])
    assert browser.eval("document.querySelectorAll('#viewport .n[style]').length") == n_ops
    no_errors(browser)
    shot(browser, "tiny_cnn_profile")

    import torch

    from tests.python.graph.test_graph import _small_module

    m, args = _small_module()
    ep = torch.export.export(m, args)
    page = wg.visualize(ep, tmp_path / "ep.html")
    load(browser, page)
    calls = [
        n for n in ep.graph.nodes if n.op == "call_function" and "getitem" not in str(n.target)
    ]
    assert op_count(browser) == len(calls)
    assert browser.eval("window.__wick.search('conv')") >= 1
    no_errors(browser)
    shot(browser, "exported_program")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["resnet50", "transformer_block", "mobilenet_v2"])
def test_big_models_render_every_op_and_stay_quick(browser, name, tmp_path):
    from tests.python.oracles import keras_models

    model = Path(keras_models.get_model_path(name))
    t0 = time.perf_counter()
    page = wg.visualize(model, tmp_path / f"{name}.html")
    gen = time.perf_counter() - t0
    times = load(browser, page)
    n_ops = len(read_tflite(model.read_bytes(), stats=False).subgraphs[0].operators)
    assert op_count(browser) == n_ops
    assert browser.eval("window.__wick.search('CONV') + window.__wick.search('FULLY')") >= 1
    no_errors(browser)
    shot(browser, name)
    # Timing is reported, never asserted (docs/testing.md: timing belongs in bench/).
    print(
        f"{name}: {n_ops} ops, generated in {gen:.2f} s, {page.stat().st_size / 1024:.0f} KiB, "
        f"ready {times['ready_ms']:.0f} ms after navigation"
    )
