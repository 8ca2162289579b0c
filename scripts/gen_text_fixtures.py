#!/usr/bin/env python3
"""Regenerate tests/fixtures/text/NAME.onnx from NAME.txt with onnx.parser.

Each .onnx file is what `onnx.parser.parse_model(text)` builds, serialized;
`tests/suite/text_syntax.rs` checks that `onnx_light::text::parse_model` builds
the same messages. Run with a Python that has `onnx` (tested with 1.23.2):

    python3 scripts/gen_text_fixtures.py
"""
import pathlib
import sys

import onnx
import onnx.parser

root = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "text"
failed = 0
for txt in sorted(root.glob("*.txt")):
    text = txt.read_text(encoding="utf-8")
    try:
        model = onnx.parser.parse_model(text)
    except Exception as e:  # noqa: BLE001 - report every failing fixture
        print(f"{txt.name}: {e}", file=sys.stderr)
        failed += 1
        continue
    txt.with_suffix(".onnx").write_bytes(model.SerializeToString())
    print(f"{txt.name}: {len(model.graph.node)} nodes, {len(model.functions)} functions")
print(f"onnx {onnx.__version__}")
sys.exit(1 if failed else 0)
