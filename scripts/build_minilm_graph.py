"""Write refgate/memory/minilm.onnx: all-MiniLM-L6-v2's computation as an ONNX graph whose weights
stay in the publisher's ``model.safetensors``, read in place by ONNX Runtime.

The graph is BERT (sentence-transformers' ``Transformer`` module: embeddings, 6 encoder layers)
followed by its ``Pooling`` (mean over the attention mask) and ``Normalize`` modules, so one run
gives the sentence embeddings sentence-transformers gives. Every weight is an ONNX initializer
stored as *external data*: location ``model.safetensors``, at the byte offset and length that the
safetensors header gives for that tensor. The graph file holds no weight (about 20 KB); the
weights are the 90.9 MB file that ``refgate.model_files`` checks by its publisher's SHA-256, so
the offsets written here are valid for exactly that file (the header is read from it to write
them, and the file's hash pins the header).

No torch and no export step: the graph is written from the architecture in ``config.json``
(hidden 384, 12 heads, 6 layers, 1536 intermediate, GELU, LayerNorm eps 1e-12), which is fixed for
this model. Needs the ``onnx`` package (dev extra). Run after changing this file:

    python scripts/build_minilm_graph.py            # writes minilm.onnx and minilm_int8.onnx
    python scripts/build_minilm_graph.py --check    # exit 1 if a committed file differs

``minilm_int8.onnx`` is the same computation with the 36 linear layers in 8-bit integers (the
*int8 encoder* of docs/architecture.md): each layer's input is quantised per pass by
``DynamicQuantizeLinear`` and multiplied by int8 weights with ``MatMulInteger``; the int8 weights
and their per-column scales are not in any file: ``refgate.memory.minilm`` computes them from the
same verified float weights when it loads (``quantize_columns``), so they are initializers
without data here.

tests/retrieval/test_minilm_onnx.py checks that the committed graph is what this script writes,
and compares its embeddings with sentence-transformers' where torch is installed.
"""

from __future__ import annotations

import argparse
import json
import math
import struct
import sys
from pathlib import Path

import onnx
from onnx import TensorProto, helper

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "refgate" / "memory" / "minilm.onnx"
OUT_INT8 = REPO / "refgate" / "memory" / "minilm_int8.onnx"
WEIGHTS = "model.safetensors"
OPSET = 17
HIDDEN, HEADS, LAYERS, INTERMEDIATE, EPS = 384, 12, 6, 1536, 1e-12
HEAD_DIM = HIDDEN // HEADS
DTYPES = {"F32": TensorProto.FLOAT, "I64": TensorProto.INT64}
#: Where the int8 graph says its computed tensors live; ONNX Runtime never reads it (the loader
#: hands every such tensor over before the session starts).
COMPUTED = "computed when refgate loads the model"


def safetensors_header(path: Path) -> tuple[int, dict]:
    """The byte offset where tensor data starts, and the header (name -> dtype, shape, offsets)."""
    with path.open("rb") as fh:
        (size,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(size))
    header.pop("__metadata__", None)
    return 8 + size, header


def external(name: str, base: int, entry: dict) -> TensorProto:
    """An initializer whose data is ``entry``'s bytes of model.safetensors."""
    begin, end = entry["data_offsets"]
    tensor = TensorProto()
    tensor.name = name
    tensor.data_type = DTYPES[entry["dtype"]]
    tensor.dims.extend(entry["shape"])
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in (
        ("location", WEIGHTS),
        ("offset", str(base + begin)),
        ("length", str(end - begin)),
    ):
        tensor.external_data.add(key=key, value=value)
    return tensor


class Graph:
    """A small node builder: each op returns its output name."""

    def __init__(self) -> None:
        self.nodes: list = []
        self.consts: list[TensorProto] = []
        self.count = 0
        self.int8 = False

    def op(self, kind: str, *inputs: str, **attrs) -> str:
        return self.ops(kind, 1, *inputs, **attrs)[0]

    def ops(self, kind: str, outputs: int, *inputs: str, **attrs) -> list[str]:
        """An op with several outputs; returns their names."""
        self.count += 1
        names = [f"{kind.lower()}_{self.count}" + (f"_{i}" if i else "") for i in range(outputs)]
        self.nodes.append(helper.make_node(kind, list(inputs), names, **attrs))
        return names

    def const(self, name: str, values: list, dtype: int = TensorProto.INT64, dims=None) -> str:
        self.consts.append(
            helper.make_tensor(name, dtype, dims if dims is not None else [len(values)], values)
        )
        return name


def linear(g: Graph, x: str, prefix: str) -> str:
    """torch's Linear on a [tokens, in] matrix: x @ W^T + b (W is [out, in] in the file)."""
    if g.int8:
        # x quantised to uint8 over this pass (scale, zero point), W^T as int8 columns with a
        # scale each: x @ W^T ~ (xq - xz) @ Wq * x_scale * w_scale
        xq, x_scale, x_zero = g.ops("DynamicQuantizeLinear", 3, x)
        product = g.op("MatMulInteger", xq, f"{prefix}.weight.int8", x_zero, "int8_zero")
        scale = g.op("Mul", x_scale, f"{prefix}.weight.scale")
        scaled = g.op("Mul", g.op("Cast", product, to=TensorProto.FLOAT), scale)
        return g.op("Add", scaled, f"{prefix}.bias")
    return g.op("Gemm", x, f"{prefix}.weight", f"{prefix}.bias", transB=1)


def layer_norm(g: Graph, x: str, prefix: str) -> str:
    return g.op("LayerNormalization", x, f"{prefix}.weight", f"{prefix}.bias", axis=-1, epsilon=EPS)


def gelu(g: Graph, x: str) -> str:
    """The exact GELU of BERT: x * 0.5 * (1 + erf(x / sqrt(2)))."""
    scaled = g.op("Div", x, "sqrt2")
    return g.op("Mul", g.op("Mul", x, g.op("Add", g.op("Erf", scaled), "one")), "half")


def computed(name: str, dtype: int, dims: list[int]) -> TensorProto:
    """An initializer of the int8 graph that the loader computes (no data in any file)."""
    tensor = TensorProto()
    tensor.name = name
    tensor.data_type = dtype
    tensor.dims.extend(dims)
    tensor.data_location = TensorProto.EXTERNAL
    tensor.external_data.add(key="location", value=COMPUTED)
    return tensor


def build(weights: Path, int8: bool = False) -> onnx.ModelProto:
    """The graph over ``weights``: float32 throughout, or with int8 linear layers (``int8``)."""
    base, header = safetensors_header(weights)
    g = Graph()
    g.int8 = int8
    if int8:
        g.const("int8_zero", [0], TensorProto.INT8, [])
    g.const("sqrt2", [math.sqrt(2.0)], TensorProto.FLOAT, [])
    g.const("one", [1.0], TensorProto.FLOAT, [])
    g.const("half", [0.5], TensorProto.FLOAT, [])
    g.const("scale", [1.0 / math.sqrt(HEAD_DIM)], TensorProto.FLOAT, [])
    g.const("tiny_count", [1e-9], TensorProto.FLOAT, [])
    g.const("tiny_norm", [1e-12], TensorProto.FLOAT, [])
    g.const("masked", [-1e9], TensorProto.FLOAT, [])
    g.const("zero", [0], dims=[1])
    g.const("one_i", [1], dims=[1])
    g.const("two_i", [2], dims=[1])
    g.const("type0", [0], dims=[])
    g.const("axis1", [1], dims=[1])
    g.const("axis_last", [-1], dims=[1])
    g.const("rows", [-1, HIDDEN], dims=[2])
    g.const("heads", [HEADS, HEAD_DIM], dims=[2])
    g.const("hidden_dim", [HIDDEN], dims=[1])

    # shapes: batch and sequence length of the input
    shape = g.op("Shape", "input_ids")
    batch = g.op("Slice", shape, "zero", "one_i")
    seq = g.op("Slice", shape, "one_i", "two_i")

    # embeddings: word + position + token type 0, then LayerNorm
    words = g.op("Gather", "embeddings.word_embeddings.weight", "input_ids")
    positions = g.op("Slice", "embeddings.position_embeddings.weight", "zero", seq)
    type0 = g.op("Gather", "embeddings.token_type_embeddings.weight", "type0")
    emb = g.op("Add", g.op("Add", words, positions), type0)
    h = g.op("Reshape", layer_norm(g, emb, "embeddings.LayerNorm"), "rows")  # [tokens, 384]

    # attention bias: 0 where the mask is 1, -1e9 where it is 0, as [batch, 1, 1, seq]
    mask = g.op("Cast", "attention_mask", to=TensorProto.FLOAT)
    bias = g.op("Mul", g.op("Sub", "one", mask), "masked")
    bias = g.op("Unsqueeze", g.op("Unsqueeze", bias, "one_i"), "one_i")

    split_shape = g.op("Concat", batch, seq, "heads", axis=0)  # [batch, seq, 12, 32]
    for n in range(LAYERS):
        p = f"encoder.layer.{n}"

        def heads(x: str) -> str:
            return g.op("Reshape", x, split_shape)

        q = g.op("Transpose", heads(linear(g, h, f"{p}.attention.self.query")), perm=[0, 2, 1, 3])
        k = g.op("Transpose", heads(linear(g, h, f"{p}.attention.self.key")), perm=[0, 2, 3, 1])
        v = g.op("Transpose", heads(linear(g, h, f"{p}.attention.self.value")), perm=[0, 2, 1, 3])
        scores = g.op("Add", g.op("Mul", g.op("MatMul", q, k), "scale"), bias)
        context = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)  # [batch, 12, seq, 32]
        context = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), "rows")
        attended = linear(g, context, f"{p}.attention.output.dense")
        h = layer_norm(g, g.op("Add", attended, h), f"{p}.attention.output.LayerNorm")
        inner = gelu(g, linear(g, h, f"{p}.intermediate.dense"))
        h = layer_norm(
            g, g.op("Add", linear(g, inner, f"{p}.output.dense"), h), f"{p}.output.LayerNorm"
        )

    # Pooling (mean over the attention mask) and Normalize (unit length), as sentence-transformers
    tokens = g.op("Reshape", h, g.op("Concat", batch, seq, "hidden_dim", axis=0))
    weights3 = g.op("Unsqueeze", mask, "axis_last")  # [batch, seq, 1]
    summed = g.op("ReduceSum", g.op("Mul", tokens, weights3), "axis1", keepdims=0)
    counts = g.op("Max", g.op("ReduceSum", weights3, "axis1", keepdims=0), "tiny_count")
    mean = g.op("Div", summed, counts)
    norm = g.op(
        "Max",
        g.op("Sqrt", g.op("ReduceSum", g.op("Mul", mean, mean), "axis_last", keepdims=1)),
        "tiny_norm",
    )
    g.nodes.append(helper.make_node("Div", [mean, norm], ["sentence_embedding"]))

    used = {name for node in g.nodes for name in node.input}
    initializers = [
        external(name, base, entry) for name, entry in sorted(header.items()) if name in used
    ]
    for name in sorted(used):
        if name.endswith(".weight.int8"):
            out, inner = header[name.removesuffix(".int8")]["shape"]
            initializers.append(computed(name, TensorProto.INT8, [inner, out]))
        elif name.endswith(".weight.scale"):
            out = header[name.removesuffix(".scale")]["shape"][0]
            initializers.append(computed(name, TensorProto.FLOAT, [out]))
    graph = helper.make_graph(
        g.nodes,
        "all-MiniLM-L6-v2" + (" int8" if int8 else ""),
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
        ],
        [helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", HIDDEN])],
        initializer=initializers + g.consts,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="refgate scripts/build_minilm_graph.py",
        doc_string="sentence-transformers/all-MiniLM-L6-v2 (Transformer, mean Pooling, Normalize); "
        f"weights: external data in {WEIGHTS}"
        + ("; linear layers in int8, their weights computed at load" if int8 else ""),
    )
    model.ir_version = 8
    # (onnx.checker would look for model.safetensors beside the working directory; ONNX Runtime
    # checks the graph when it loads it, and the tests run it)
    return model


def main() -> int:
    sys.path.insert(0, str(REPO))
    from refgate.model_files import minilm_path

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed file")
    args = ap.parse_args()
    status = 0
    for out, int8 in ((OUT, False), (OUT_INT8, True)):
        data = build(minilm_path() / WEIGHTS, int8).SerializeToString(deterministic=True)
        name = out.relative_to(REPO)
        if args.check:
            same = out.is_file() and out.read_bytes() == data
            print(f"{name}: {'up to date' if same else 'DIFFERS from what this script writes'}")
            status |= 0 if same else 1
        else:
            out.write_bytes(data)
            print(f"wrote {name} ({len(data)} bytes)")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
