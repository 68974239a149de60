"""Defaults the plugin relies on (#7): a parameter the call leaves out whose default moved OLD -> NEW."""

import pytest

from harness import expect, only, run_scan
from pinport.checks.call_defaults import DefaultsCheck

USE = "plug/use.py"


def scan(old: dict[str, str], new: dict[str, str], plugin: str):
    return run_scan(old, new, {USE: plugin}, checks=(DefaultsCheck(),))


FUNC = "def build(a, eager={eager}, size=1):\n    pass\n"
CALL = "from host.api import build\n\n\ndef go():\n    return {call}\n"


@pytest.mark.parametrize(("old", "new", "call", "expected"), [
    ("False", "True", "build(1)", ["PP0706 warning drift go:5"]),
    # the plugin passes it: its own value, whatever the default
    ("False", "True", "build(1, eager=False)", ["no PP0706"]),
    ("False", "True", "build(1, False)", ["no PP0706"]),
    # the same default, written differently
    ("False", "(False)", "build(1)", ["no PP0706"]),
    # `**kwargs` may carry it: not judged
    ("False", "True", "build(1, **opts)", ["no PP0706"]),
])
def test_function_defaults(old, new, call, expected):
    plugin = CALL.format(call=call).replace("def go():", "def go(opts=None):")
    expect(scan({"host/api.py": FUNC.format(eager=old)}, {"host/api.py": FUNC.format(eager=new)}, plugin),
           expected, at=True)


def test_evidence_has_both_defaults():
    result = scan({"host/api.py": FUNC.format(eager="False")}, {"host/api.py": FUNC.format(eager="True")},
                  CALL.format(call="build(1)"))
    finding = only(result, "PP0706")
    assert finding.args == {"callee": "host.api.build", "name": "eager", "old_default": "False",
                            "new_default": "True", "label": "host 2.0"}
    assert "eager=False" in finding.old.snippet and "eager=True" in finding.new.snippet
    assert finding.details == ("`eager`: host 1.0 `False` -> host 2.0 `True`",)


DATACLASS = "from dataclasses import dataclass, field\n\n\n@dataclass\nclass Cfg:\n    a: int\n    mode: str = {mode}\n"


@pytest.mark.parametrize(("old", "new", "expected"), [
    ('"fast"', '"safe"', ["PP0706 warning drift go:5"]),
    ('field(default="fast")', '"fast"', ["no PP0706"]),  # the same value, another spelling
    ('"fast"', '"fast"', ["no PP0706"]),
])
def test_dataclass_field_defaults(old, new, expected):
    plugin = "from host.cfg import Cfg\n\n\ndef go():\n    return Cfg(a=1)\n"
    expect(scan({"host/cfg.py": DATACLASS.format(mode=old)}, {"host/cfg.py": DATACLASS.format(mode=new)}, plugin),
           expected, at=True)
