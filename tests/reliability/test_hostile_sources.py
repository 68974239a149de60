"""Hostile or odd source never ends the scan and never shifts a line (each case generated here)."""

from __future__ import annotations

import time

import pytest

from pinport.findings import Severity, Status
from pinport.model.parse import MAX_SOURCE_BYTES, summarize

from .conftest import HOST_NEW, HOST_OLD, PLUGIN, encoded, scan_bytes

PLUGIN_FILES = {k: v for k, v in PLUGIN.items() if k != "pyproject.toml"}
DEEP = {
    "chained-plus": "x = " + "+".join(["1"] * 3000) + "\n",  # RecursionError in ast construction
    "nested-not": "x = " + "not " * 20000 + "1\n",  # MemoryError in the parser
    "long-attribute-chain": "x = a" + ".b" * 100000 + "\n",
}


def _the_override_break(result):
    """The one finding the standard trio has: NEW's `step` gained a parameter the override lacks."""
    found = [f for f in result.findings if f.code == "PP0101"]
    assert len(found) == 1, [(f.code, f.message) for f in result.findings]
    f = found[0]
    assert (f.level, f.status, f.args.get("param")) == (Severity.WARNING, Status.DRIFT, "is_profiling")
    return f


@pytest.mark.parametrize("kind", sorted(DEEP))
def test_a_plugin_file_too_deep_for_the_parser_is_pp0005_and_the_scan_goes_on(tmp_path, kind):
    plugin = encoded({**PLUGIN_FILES, "plug/deep.py": DEEP[kind]})
    result = scan_bytes(encoded(HOST_OLD), encoded(HOST_NEW), plugin, tmp_path)
    deep = [f for f in result.findings if f.code == "PP0005"]
    assert [(f.plugin.path, f.level, f.status) for f in deep] == [("plug/deep.py", Severity.ERROR, Status.LATENT)]
    assert "nested too deeply for Python's parser" in deep[0].message
    _the_override_break(result)
    assert len(result.findings) == 2


@pytest.mark.parametrize("kind", sorted(DEEP))
def test_a_host_file_too_deep_is_unknown_not_missing(tmp_path, kind):
    """The plugin imports from a host module that cannot be parsed: no "does not exist" findings."""
    deep_module = "def helper(a, b):\n    pass\n\nclass Thing:\n    pass\n\n" + DEEP[kind]
    host = {**HOST_NEW, "host/deep.py": deep_module}
    plugin = {**PLUGIN_FILES, "plug/uses.py": "from host.deep import Thing, helper\nfrom host import deep\n\n\n"
                                              "def go():\n    return helper(1, 2), deep.Thing(), deep.other\n"}
    result = scan_bytes(encoded({**HOST_OLD, "host/deep.py": deep_module}), encoded(host), encoded(plugin),
                        tmp_path)
    _the_override_break(result)
    assert len(result.findings) == 1, [(f.code, f.message) for f in result.findings]


def test_a_host_module_unparsed_only_at_new_raises_no_false_breaks(tmp_path):
    """NEW's runner.py gains a too-deep line: its class is unknown at NEW, so nothing is claimed gone."""
    new = {**HOST_NEW, "host/runner.py": HOST_NEW["host/runner.py"] + DEEP["chained-plus"]}
    result = scan_bytes(encoded(HOST_OLD), encoded(new), encoded(PLUGIN_FILES), tmp_path)
    assert [f for f in result.findings if f.level is Severity.ERROR] == []
    assert not any("does not exist" in f.message or "no longer" in f.message for f in result.findings)


def test_a_bom_is_stripped_in_plugin_and_host(tmp_path):
    bom = b"\xef\xbb\xbf"
    plugin = {rel: bom + data for rel, data in encoded(PLUGIN_FILES).items()}
    new = {rel: bom + data for rel, data in encoded(HOST_NEW).items()}
    old = {rel: bom + data for rel, data in encoded(HOST_OLD).items()}
    result = scan_bytes(old, new, plugin, tmp_path)
    f = _the_override_break(result)
    assert (f.plugin.path, f.plugin.line, f.new.path, f.new.line) == ("plug/patch.py", 5, "host/runner.py", 2)
    assert len(result.findings) == 1


@pytest.mark.parametrize("ending", ["\r\n", "\r"])
def test_line_endings_python_accepts_keep_every_line_in_place(tmp_path, ending):
    def convert(files):
        return {rel: text.replace("\n", ending).encode() for rel, text in files.items()}

    result = scan_bytes(convert(HOST_OLD), convert(HOST_NEW), convert(PLUGIN_FILES), tmp_path)
    f = _the_override_break(result)
    assert (f.plugin.line, f.new.line) == (5, 2)
    assert len(result.findings) == 1


def test_form_feed_lines_do_not_shift_positions_or_defaults(tmp_path):
    """`str.splitlines` splits at \\x0c, Python does not: lines and default texts stay Python's."""
    new_runner = ("class Runner:\n\x0c\n    def step(self, a, is_profiling=False):\n        pass\n\x0c\n"
                  "    def stop(self, now=\"soon\"):\n        pass\n\x0c\n\n\ndef drive(runner: Runner):\n"
                  "    runner.step(1, is_profiling=True)\n")  # a host call reaching the override
    old_runner = "class Runner:\n    def step(self, a):\n        pass\n\n    def stop(self, now=\"later\"):\n        pass\n"
    plugin = {**PLUGIN_FILES, "plug/patch.py": "from host.runner import Runner\n\x0c\n\n"
                                               "class Mine(Runner):\n    def step(self, a):\n        pass\n\x0c\n"
                                               "    def stop(self, now=\"later\"):\n        pass\n"}
    result = scan_bytes(encoded({**HOST_OLD, "host/runner.py": old_runner}),
                        encoded({**HOST_NEW, "host/runner.py": new_runner}), encoded(plugin), tmp_path)
    f = _the_override_break(result)
    assert (f.plugin.line, f.new.line) == (5, 3)
    defaults = [g for g in result.findings if "stop" in g.subject]
    assert defaults, [(g.code, g.message) for g in result.findings]
    assert all('"soon"' in g.message and '"later"' in g.message for g in defaults), \
        [(g.code, g.message) for g in defaults]
    assert all(g.plugin.line == 8 and g.new.line == 6 for g in defaults)


def test_pep_263_encodings_are_honoured(tmp_path):
    cookie = "# -*- coding: latin-1 -*-\n"
    new_runner = cookie + "class Runner:\n    def step(self, a, is_profiling=False, name='caf\xe9'):\n        pass\n"
    plugin = {**PLUGIN_FILES, "plug/patch.py": cookie + "# r\xe9sum\xe9\n" + PLUGIN_FILES["plug/patch.py"]}
    result = scan_bytes(encoded(HOST_OLD), {**encoded(HOST_NEW), "host/runner.py": new_runner.encode("latin-1")},
                        {**encoded(plugin), "plug/patch.py": plugin["plug/patch.py"].encode("latin-1")}, tmp_path)
    assert not [f for f in result.findings if f.code == "PP0005"]
    params = sorted(f.args.get("param") for f in result.findings if f.code == "PP0101")
    assert params == ["is_profiling", "name"]
    assert all(f.plugin.line == 7 and f.new.line == 3 for f in result.findings if f.code == "PP0101")
    assert any("caf\xe9" in f.new.snippet for f in result.findings if f.code == "PP0101")


def test_a_file_over_the_size_limit_costs_nothing_and_is_reported(tmp_path):
    huge = "x = [\n" + "    1,\n" * (MAX_SOURCE_BYTES // 7 + 1) + "]\n"  # would take ~1 GB to parse
    started = time.perf_counter()
    summary = summarize(huge.encode(), "plug.huge", False)
    assert time.perf_counter() - started < 1
    assert summary.syntax_error == f"{len(huge) / 2**20:.1f} MB, over the 2 MB one file may cost to parse"
    result = scan_bytes(encoded(HOST_OLD), encoded(HOST_NEW), encoded({**PLUGIN_FILES, "plug/huge.py": huge}),
                        tmp_path)
    huge_findings = [f for f in result.findings if f.code == "PP0005"]
    assert [(f.plugin.path, f.level) for f in huge_findings] == [("plug/huge.py", Severity.ERROR)]
    assert "over the 2 MB one file may cost to parse" in huge_findings[0].message
    _the_override_break(result)


@pytest.mark.parametrize("data", [b"\x00\x00x = 1\n", b"x = '\xff\xfe'\n", b"# coding: no-such-codec\nx = 1\n",
                                  b"\xef\xbb\xbf# coding: latin-1\nx = 1\n", b"def f(:\n"])
def test_undecodable_or_broken_bytes_are_a_finding_or_harmless(tmp_path, data):
    result = scan_bytes(encoded(HOST_OLD), encoded(HOST_NEW), {**encoded(PLUGIN_FILES), "plug/odd.py": data},
                        tmp_path)
    _the_override_break(result)
    assert all(f.code in ("PP0101", "PP0005") for f in result.findings)
