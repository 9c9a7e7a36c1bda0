"""`decode` prints standard JSON whatever the frames held: a NaN or infinity as sent (the stdlib parser accepts
them, JSON does not) is written as null, decided once (`core.wire.jsonfast.finite`), never as bare `NaN`."""
from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from core.wire.jsonfast import dumps_standard, finite
from tests.corpus import ROOT

BODY = (b'data: {"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":NaN}]}\n\n'
        b'data: {"choices":[],"usage":{"prompt_tokens":Infinity,"completion_tokens":1,"x":[-Infinity,1.5]}}\n\n'
        b"data: [DONE]\n\n")


def strict_loads(text: str):
    def refuse(name):
        raise ValueError(f"not standard JSON: {name}")
    return json.loads(text, parse_constant=refuse)


def test_finite_replaces_non_finite_numbers_once():
    v = {"a": [math.nan, 1.5, (math.inf, -math.inf)], "b": {"c": 2}}
    assert finite(v) == {"a": [None, 1.5, [None, None]], "b": {"c": 2}}
    assert math.isnan(v["a"][0])          # (the value itself is not changed)
    plain = {"a": [1, 2.5, "NaN"]}
    assert finite(plain) is plain
    assert dumps_standard(v) == '{"a": [null, 1.5, [null, null]], "b": {"c": 2}}'
    deep = [math.nan]
    for _ in range(5000):                 # iterative (dumps itself stops sooner: finite alone here)
        deep = [deep]
    finite(deep)


@pytest.mark.parametrize("size", [None, "1", "7"])
def test_decode_prints_standard_json_for_nan_and_infinity(tmp_path, size):
    f = tmp_path / "nan.sse"
    f.write_bytes(BODY)
    p = subprocess.run([sys.executable, str(ROOT / "main.py"), "decode", "--format", "openai-chat", str(f)]
                       + (["--chunk-size", size] if size else []), capture_output=True, cwd=ROOT, timeout=60)
    assert p.returncode == 0, p.stderr.decode()[-300:]
    out = strict_loads(p.stdout.decode())
    assert out["finish_reason"] == {"canonical": "other", "raw": None}
    assert out["usage"]["raw"] == {"prompt_tokens": None, "completion_tokens": 1, "x": [None, 1.5]}
    assert out["usage"]["input_tokens"] is None and out["usage"]["output_tokens"] == 1
    assert out["blocks"][0]["text"] == "a" and out["terminated"] is True
