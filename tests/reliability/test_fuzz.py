"""Fuzz: real ArcticInference modules, mutated byte by byte, never crash the parser or a check.

Each example takes one module of the real arctic-inference 0.3.0 sdist (from the user cache),
applies one to three mutations (truncation, a cut or repeated slice, hostile bytes inserted:
NUL, BOM, CR, form feed, deep brackets, invalid UTF-8 ...), summarises it and scans it as a
plugin against a small host, with checks strict: any exception fails the test. The number of
examples is bounded (PINPORT_FUZZ_EXAMPLES, default 25) so the suite stays fast.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pinport.model.parse import summarize
from pinport.model.summary import ModuleSummary
from pinport.sources import Cache, fetch_release

from .conftest import HOST_NEW, HOST_OLD, encoded, scan_bytes

pytestmark = pytest.mark.real
EXAMPLES = int(os.environ.get("PINPORT_FUZZ_EXAMPLES", "25"))
HOSTILE = [b"\x00", b"\xef\xbb\xbf", b"\r", b"\r\n", b"\x0c", b"\x0b", b"(" * 200, b"[" * 120, b"\xff\xfe",
           b"\xe9", b"    ", b"\t", b"\n", b"def f(:", b"'''", b'"', b"\\", b"# -*- coding: latin-1 -*-\n",
           b"# coding: utf-16\n", b"not " * 500, b"+1" * 1500, b"lambda: " * 200, b"\xe2\x80\xa8", b"\x1c"]


@cache
def _modules() -> tuple[tuple[str, bytes], ...]:
    tree = fetch_release("arctic-inference", "0.3.0", cache=Cache(), prefer="sdist")
    found = [(rel, (tree.root / rel).read_bytes()) for rel in sorted(tree.files) if rel.endswith(".py")]
    # host imports point at the small test host, so the checks have something to resolve
    return tuple((rel, data.replace(b"vllm", b"host")) for rel, data in found if 200 < len(data) < 120_000)


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, bytes]:
    rel, data = draw(st.sampled_from(_modules()))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(data)))
        span = draw(st.integers(0, 400))
        how = draw(st.sampled_from(["truncate", "cut", "repeat", "insert", "swap-lines"]))
        if how == "truncate":
            data = data[:at]
        elif how == "cut":
            data = data[:at] + data[at + span:]
        elif how == "repeat":
            data = data[:at + span] + data[at:at + span] + data[at + span:]
        elif how == "insert":
            data = data[:at] + draw(st.sampled_from(HOSTILE)) + data[at:]
        else:
            lines = data.split(b"\n")
            i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
            data = b"\n".join(lines)
    return rel, data


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(case=mutated())
def test_mutated_real_plugin_modules_never_crash(tmp_path_factory: pytest.TempPathFactory,
                                                 case: tuple[str, bytes]) -> None:
    rel, data = case
    summary = summarize(data, "plug.fuzzed", False)
    assert isinstance(summary, ModuleSummary)
    tmp: Path = tmp_path_factory.mktemp("fuzz")
    plugin = {"plug/__init__.py": b"", "plug/fuzzed.py": data}
    result = scan_bytes(encoded(HOST_OLD), encoded(HOST_NEW), plugin, tmp)  # strict: a check crash raises
    unparsed = [f for f in result.findings if f.code == "PP0005"]
    assert bool(unparsed) == bool(summary.syntax_error), (rel, summary.syntax_error)
    assert all(f.code != "PP0099" for f in result.findings)
