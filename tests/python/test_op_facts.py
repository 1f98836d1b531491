"""The converter's one table of operator facts (wick.tflite.ops) held to the runtime and LiteRT.

A drift on either side fails here:
* names and codes against the runtime's schema list (src/format/schema.h) and, when LiteRT is
  installed, LiteRT's own generated schema;
* every op the runtime registers (src/ops/op_table.inc) is a builtin of the table;
* every options table a row names exists, and each table's union type belongs to one name;
* the newest version the writer declares for an op against the newest version the wick library
  runs (asked through wick_model_op_supported, one file with every (op, version) pair) — the
  known differences are listed with their reasons, so a new one, or a fixed one, fails;
* the newest version the writer declares against the versions LiteRT's resolvers register
  (LiteRT refuses a file with an (op, version) pair it lacks);
* rules made of one dtype table (versions.ByInput) declare exactly their largest value;
* the float unary ops' records (src/kernels/reference/unary_ops.inc, read by
  wick.tflite.unary_ops) name registered ops, their oracles agree with LiteRT's reference
  resolver, the converter's rules come from them, and the reader refuses malformed lines;
* the elementwise binary ops' records (src/kernels/reference/binary_ops.inc, read by
  wick.tflite.binary_ops) likewise: registered ops at the runtime's newest version, the
  converter's rules and the layout pass's list from them, malformed lines refused (their numpy
  oracles are held to wick's outputs by tests/python/ops/test_elementwise_binary.py).
"""

from __future__ import annotations

import ctypes
import re
from pathlib import Path

import pytest

from wick.tflite import binary_ops, ops, unary_ops, versions
from wick.tflite.options import OPTIONS_TABLES, options_table
from wick.tflite.writer import ModelWriter

ROOT = Path(__file__).resolve().parents[2]
NOT_OPERATORS = {"CUSTOM", "DELEGATE", "PLACEHOLDER_FOR_GREATER_OP_CODES"}

# op -> (writer's newest, runtime's newest, why they differ)
KNOWN_VERSION_GAPS = {
    "ADD": (6, 5, "v6 is float16 ADD, which wick does not run"),
    "MUL": (8, 7, "v8 is float16 MUL, which wick does not run"),
    "CAST": (8, 5, "v6-v8 cast int4, bfloat16, int2/uint4, which wick does not run"),
    "CONCATENATION": (5, 4, "v5 is int4, which wick does not run"),
    "DEQUANTIZE": (8, 5, "v6-v8 dequantize int4, int2, uint4, which wick does not run"),
    "QUANTIZE": (5, 3, "v4-v5 quantize to int4/uint4, which wick does not run"),
    "FULLY_CONNECTED": (14, 12, "v13-v14 are int4 weights with int16 activations and int2"),
    "NOT_EQUAL": (4, 3, "v4 is int16 NOT_EQUAL, where LiteRT 2.3.0 does not compare raw values"),
    "SVDF": (1, 4, "the writer has no rule for hybrid/int8 SVDF: pass version= explicitly"),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": (
        1,
        3,
        "the writer has no rule for hybrid/int8 LSTM: pass version= explicitly",
    ),
}


# (op, version) pairs the writer may declare that LiteRT's reference resolver lacks (measured
# with ai_edge_litert 2.3.0; the default resolver has them all)
REFERENCE_RESOLVER_LACKS = [
    "ADD v6",
    "DEPTHWISE_CONV_2D v7",
    "DEPTH_TO_SPACE v2",
    "MUL v8",
    "SQUEEZE v2",
    "STRIDED_SLICE v8",
    "ARG_MAX v3",
    "TILE v3",
    "ARG_MIN v3",
    "RANGE v2",
    "ABS v5",
]


def _schema_h() -> dict[str, int]:
    text = (ROOT / "src" / "format" / "schema.h").read_text()
    block = text[text.index("#define WICK_BUILTIN_OPERATORS(X)") :]
    block = block[: block.index("\n\n")]
    return {name: int(code) for name, code in re.findall(r"X\((\w+), (\d+)\)", block)}


def _runtime_ops() -> list[str]:
    text = (ROOT / "src" / "ops" / "op_table.inc").read_text()
    return re.findall(r"^WICK_OP\((\w+),", text, re.M)


def test_codes_match_the_runtime_schema():
    runtime = _schema_h()
    table = {op.name: op.code for op in ops.OPS}
    assert len(ops.BY_CODE) == len(ops.OPS), "two rows share a code"
    assert table == runtime, {
        "only in ops.py": sorted(set(table.items()) - set(runtime.items())),
        "only in schema.h": sorted(set(runtime.items()) - set(table.items())),
    }


def test_codes_match_litert_schema():
    generated = pytest.importorskip(
        "ai_edge_litert.schema_py_generated", reason="LiteRT (ai_edge_litert) is not installed"
    )
    theirs = {k: v for k, v in vars(generated.BuiltinOperator).items() if not k.startswith("_")}
    table = {op.name: op.code for op in ops.OPS}
    # LiteRT may know newer ops than this table; every op here must be theirs, code for code
    assert {k: theirs.get(k) for k in table} == table


def test_runtime_ops_are_builtins_of_the_table():
    names = _runtime_ops()
    assert names == sorted(names), "op_table.inc is not sorted"
    unknown = [n for n in names if n not in ops.BY_NAME or n in NOT_OPERATORS]
    assert not unknown, f"op_table.inc names ops the table does not know: {unknown}"


def test_options_tables_exist_and_unions_are_unique():
    for op in ops.OPS:
        if op.options is not None:
            assert op.options in OPTIONS_TABLES, f"{op.name}: unknown table {op.options}"
    seen: dict[tuple[int, int], str] = {}
    for name, t in OPTIONS_TABLES.items():
        assert (t.union, t.type) not in seen, (name, seen.get((t.union, t.type)))
        seen[(t.union, t.type)] = name


def test_dtype_table_rules_declare_their_newest():
    for op in ops.OPS:
        if isinstance(op.rule, versions.ByInput):
            assert op.newest == op.rule.newest, op.name
        if op.rule is None:
            assert op.newest == 1, f"{op.name}: newest {op.newest} without a rule"


def test_min_version_refuses_a_rule_beyond_newest(monkeypatch):
    row = ops.BY_NAME["RELU"]
    monkeypatch.setitem(ops.BY_NAME, "RELU", row._replace(newest=2))
    sig = versions.OpSig("RELU", [versions.TensorSig("int16")], [versions.TensorSig("int16")])
    with pytest.raises(AssertionError, match="outside 1..2"):
        ops.min_version(sig)


def _probe_model(pairs: list[tuple[str, int]]) -> bytes:
    """One file holding an operator for each (op, version) pair. Control-flow ops point their
    subgraph options at a second subgraph, so the file is well formed."""
    m = ModelWriter()
    main = m.add_subgraph()
    t = main.add_tensor("x", (1,), "float32")
    main.set_inputs([t])
    main.set_outputs([t])
    body = m.add_subgraph("body")
    b = body.add_tensor("y", (1,), "float32")
    body.set_inputs([b])
    body.set_outputs([b])
    for name, v in pairs:
        table = options_table(name)
        fields = table.fields if table else ()
        opts = {f.name: 1 for f in fields if f.name.endswith("subgraph_index")}
        main.add_operator(name, [], [], options=opts, version=v)
    return m.finish()


def _runtime_newest(names: list[str]) -> dict[str, int]:
    from wick import runtime

    lib = runtime._library()
    P, S = ctypes.c_void_p, ctypes.c_size_t
    lib.wick_model_op_supported.argtypes = [P, S, S, ctypes.c_char_p, S]
    lib.wick_model_op_supported.restype = ctypes.c_int
    pairs = [(n, v) for n in names for v in range(1, 17)]
    data = _probe_model(pairs)
    buf = ctypes.create_string_buffer(data, len(data))
    err, model = runtime._ErrorInfo(), P()
    status = lib.wick_model_load_buffer(
        buf, len(data), None, ctypes.byref(err), ctypes.byref(model)
    )
    assert status == 0, bytes(err.message).split(b"\0")[0]
    try:
        newest: dict[str, int] = {}
        for i, (n, v) in enumerate(pairs):
            if lib.wick_model_op_supported(model, 0, i, None, 0):
                newest[n] = max(newest.get(n, 0), v)
        return newest
    finally:
        lib.wick_model_destroy(model)


def test_writer_versions_match_the_runtime():
    names = _runtime_ops()
    runtime = _runtime_newest(names)
    gaps = {}
    for n in names:
        if ops.BY_NAME[n].newest != runtime.get(n, 0):
            gaps[n] = (ops.BY_NAME[n].newest, runtime.get(n, 0))
    known = {k: v[:2] for k, v in KNOWN_VERSION_GAPS.items()}
    assert gaps == known, {
        "new gaps (fix the row, the rule or the runtime record; or list them with a reason)": {
            k: v for k, v in gaps.items() if known.get(k) != v
        },
        "gaps that closed (remove them from KNOWN_VERSION_GAPS)": {
            k: v for k, v in known.items() if gaps.get(k) != v
        },
    }


@pytest.mark.parametrize("reference", [False, True], ids=["builtin", "reference"])
def test_writer_newest_versions_exist_in_litert(reference):
    interp = pytest.importorskip(
        "ai_edge_litert.interpreter", reason="LiteRT (ai_edge_litert) is not installed"
    )
    kind = interp.OpResolverType.BUILTIN_REF if reference else interp.OpResolverType.BUILTIN
    missing = []
    for op in ops.OPS:
        if op.rule is None or op.name in NOT_OPERATORS:
            continue  # version 1 of every registered op exists
        try:
            interp.Interpreter(
                model_content=_probe_model([(op.name, op.newest)]),
                experimental_op_resolver_type=kind,
            )
        except (RuntimeError, ValueError):
            missing.append(f"{op.name} v{op.newest}")
    # LiteRT's reference resolver (BUILTIN_REF) registers fewer versions of some ops; only its
    # default resolver must have every version the writer declares
    expected = REFERENCE_RESOLVER_LACKS if reference else []
    assert missing == expected, f"the writer declares versions LiteRT does not register: {missing}"


# ---- the op records: the float unary ops (src/kernels/reference/unary_ops.inc), then binary ----


@pytest.mark.parametrize("file", ["unary_ops.inc", "binary_ops.inc"])
def test_records_are_the_registered_ops(file):
    """Each record names an op of the table whose op_table.inc line holds wick_op_<symbol>, at the
    newest version the runtime runs (the writer's, but for the gaps listed above)."""
    registered = dict(
        re.findall(r"^WICK_OP\((\w+), (\w+)\)", (ROOT / "src/ops/op_table.inc").read_text(), re.M)
    )
    records = unary_ops.unary_ops() if file == "unary_ops.inc" else binary_ops.records()
    assert records, "no record read"
    for r in records:
        assert registered.get(r.name) == f"wick_op_{r.symbol}", r.name
        assert r.name in ops.BY_NAME, r.name
        newest = KNOWN_VERSION_GAPS.get(r.name, (0, ops.BY_NAME[r.name].newest))[1]
        assert r.version == newest, (r.name, r.version, newest)


def test_unary_record_oracles_match_litert_reference_resolver():
    """ORACLE says LITERT_REF exactly when LiteRT's reference resolver registers the op."""
    interp = pytest.importorskip(
        "ai_edge_litert.interpreter", reason="LiteRT (ai_edge_litert) is not installed"
    )
    registered = {}
    for r in unary_ops.unary_ops():
        try:
            interp.Interpreter(
                model_content=_probe_model([(r.name, 1)]),
                experimental_op_resolver_type=interp.OpResolverType.BUILTIN_REF,
            )
            registered[r.name] = True
        except (RuntimeError, ValueError):
            registered[r.name] = False
    assert registered == {r.name: r.litert_reference for r in unary_ops.unary_ops()}


def test_unary_converter_rules_come_from_the_records():
    pytest.importorskip("torch", reason="the converter needs torch")
    from wick.converter.lower import elementwise
    from wick.converter.passes import layout

    for r in unary_ops.unary_ops():
        assert r.name in layout.UNARY, r.name
        if r.aten is not None:
            assert f"{r.aten}.default" in elementwise.RULES, r.aten


RECORD = (
    'WICK_UNARY_F32(CEIL, ceil, ceilf(x), 1, 0, F32, -9, 9.5, EXACT, HALVES, ceil, "np.ceil(x)")'
)


def test_unary_record_parser_reads_fields():
    text = (
        "/* a comment, with commas, WICK_UNARY_F32(X) */\n"
        "/* clang-format off */\n"
        f"{RECORD}\n"
        "WICK_UNARY_F32(MAXZ, maxz, fmaxf(x, 0.0f), 2, WICK_OP_ELEMENTWISE, F32_I32, 0.01, 10,"
        ' APPROX, POSITIVE, NO_ATEN, "np.where(x < 0, 0, x)") /* trailing, comment */\n'
        "WICK_UNARY_F32(NEGZ, negz, -x, 1, 0, F32, -4, 4, EXACT, REAL, neg, LITERT_REF)\n"
    )
    ceil, maxz, negz = unary_ops.parse(text)
    assert ceil == unary_ops.UnaryOp(
        "CEIL", "ceil", "ceilf(x)", 1, "0", "F32", -9.0, 9.5, "EXACT", "HALVES", "ceil",
        "np.ceil(x)",
    )  # fmt: skip
    assert not ceil.litert_reference and negz.litert_reference
    assert maxz.kernel == "fmaxf(x, 0.0f)" and maxz.numpy == "np.where(x < 0, 0, x)"
    assert maxz.aten is None and maxz.flags == "WICK_OP_ELEMENTWISE" and maxz.types == "F32_I32"
    assert negz.aten == "neg" and negz.numpy is None


# ---- the elementwise binary ops' records (src/kernels/reference/binary_ops.inc) -----------------


def test_binary_records_go_in_the_order_of_the_enums():
    """Arithmetic, then comparisons, then logical: the order of reference.h's enums."""
    kinds = [
        "logical" if getattr(r, "logical", False) else type(r).__name__
        for r in binary_ops.records()
    ]
    assert kinds == sorted(kinds, key=["BinaryOp", "CompareOp", "logical"].index)


def test_binary_converter_rules_come_from_the_records():
    pytest.importorskip("torch", reason="the converter needs torch")
    from wick.converter.lower import elementwise
    from wick.converter.passes import layout

    for r in binary_ops.records():
        assert r.name in layout.NARY, r.name
        if r.aten is not None:
            assert any(k.split(".")[0] == r.aten for k in elementwise.RULES), r.aten


BINARY_RECORD = (
    "WICK_BINARY_F32(HYPOT, hypot, hypotf(x, y), 1, 0, F32, NONE, -2, 2, -2.5, 2, APPROX, REAL,"
    ' hypot, "np.hypot(x, y)")'
)
COMPARE_RECORD = 'WICK_COMPARE(EQUAL, equal, x == y, 5, eq, "np.equal(x, y)")'


def test_binary_record_parser_reads_fields():
    text = (
        "/* a comment, with commas, WICK_COMPARE(X) */\n"
        "#ifndef WICK_LOGICAL\n#define WICK_LOGICAL(...)\n#endif\n"
        f"{BINARY_RECORD} /* trailing, comment */\n"
        f"{COMPARE_RECORD}\n"
        'WICK_LOGICAL(LOGICAL_OR, logical_or, x || y, 1, NO_ATEN, "np.logical_or(x, y)")\n'
        "WICK_BINARY_F32(ADD, add, x + y, 5, WICK_OP_ELEMENTWISE, F32_I32_I64, ACTIVATION, -2, 2,"
        ' 0.25, 2, EXACT, NONZERO, NO_ATEN, "x + y")\n'
    )
    hypot, equal, logical_or, add = binary_ops.parse(text)
    assert hypot == binary_ops.BinaryOp(
        "HYPOT", "hypot", "hypotf(x, y)", 1, "0", "F32", False, -2.0, 2.0, -2.5, 2.0, "APPROX",
        "REAL", "hypot", "np.hypot(x, y)",
    )  # fmt: skip
    assert equal == binary_ops.CompareOp(
        "EQUAL", "equal", "x == y", 5, "eq", "np.equal(x, y)", False
    )
    assert logical_or.logical and logical_or.aten is None and logical_or.kernel == "x || y"
    assert add.activation and add.flags == "WICK_OP_ELEMENTWISE" and add.b_lo == 0.25
    assert add.domain == "NONZERO" and add.aten is None and add.numpy == "x + y"


MALFORMED = {
    "unary-not-a-record": ("CEIL(1)", r"t.inc:2: not a WICK_UNARY_F32"),
    "unary-fields": (RECORD.replace(", -9,", ","), r"t.inc:2: 11 fields, a record has 12"),
    "unary-domain": (RECORD.replace("HALVES", "ODD"), r"domain 'ODD' unknown"),
    "unary-result": (RECORD.replace("EXACT", "CLOSE"), r"result 'CLOSE' unknown"),
    "unary-symbol": (RECORD.replace("ceil, ceilf", "Ceil, ceilf"), r"symbol 'Ceil'"),
    "unary-oracle": (RECORD.replace('"np.ceil(x)"', "np.ceil"), r"oracle 'np.ceil': LITERT_REF"),
    "unary-twice": (RECORD + "\n" + RECORD, r"an op has two records"),
    "binary-not-a-record": ("EQUAL(1)", r"t.inc:2: not a WICK_BINARY_F32\(...\) or WICK_COMPARE"),
    "binary-fields": (
        BINARY_RECORD.replace(", -2.5,", ","),
        r"t.inc:2: 14 fields, a record has 15",
    ),
    "binary-compare-fields": (COMPARE_RECORD.replace(", eq,", ","), r"5 fields, a record has 6"),
    "binary-domain": (BINARY_RECORD.replace("REAL", "ODD"), r"domain 'ODD' unknown"),
    "binary-result": (BINARY_RECORD.replace("APPROX", "CLOSE"), r"result 'CLOSE' unknown"),
    "binary-options": (BINARY_RECORD.replace("NONE", "FUSED"), r"options 'FUSED' unknown"),
    "binary-types": (BINARY_RECORD.replace(" F32,", " I8,"), r"types 'I8' unknown"),
    "binary-symbol": (COMPARE_RECORD.replace("equal, x", "EQUAL, x"), r"symbol 'EQUAL'"),
    "binary-oracle": (
        COMPARE_RECORD.replace('"np.equal(x, y)"', "np.equal"),
        r"'np.equal': a numpy",
    ),
    "binary-twice": (COMPARE_RECORD + "\n" + COMPARE_RECORD, r"an op has two records"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_record_parsers_refuse_malformed_lines(case):
    line, match = MALFORMED[case]
    parse = unary_ops.parse if case.startswith("unary") else binary_ops.parse
    with pytest.raises(ValueError, match=match):
        parse("/* header */\n" + line, "t.inc")
