"""The architecture's promises (issue #8): one member-lookup rule, shared facts, checks that only judge."""

import pytest

from harness import run_scan
from pinport.findings import Severity, Status

_ENGINE = """\
{imports}

class Engine{bases}:
    def __init__(self, config):
        self.config = config
        self.scale = config.scale
        self.steps = 0

    def step(self, batch):
        outputs = []
        for item in batch:
            value = item * self.scale
            outputs.append(value)
        self.steps += 1
        return outputs
"""
_MIRROR = """\
from plug.patching import ArcticPatch
from host.engine import Engine


class EnginePatch(ArcticPatch[Engine]):
    def step(self, batch):
        outputs = []
        for item in batch:
            value = item * self.scale
            outputs.append(value)
        self.steps += 1
        return outputs
"""
PATCHING = {"plug/patching.py": "class ArcticPatch:\n    pass\n"}


@pytest.mark.parametrize(("imports", "bases"), [
    ("from abc import ABC", "(ABC)"),  # `Engine(ABC)`: the lookup looks past the inert base
    ("import abc", "(abc.ABC)"),
    ("from typing import Protocol", "(Protocol)"),
    ("import os", ""),  # the same class without a base
])
def test_mirror_reading_a_member_new_no_longer_sets(imports, bases):
    old = _ENGINE.format(imports=imports, bases=bases)
    new = old.replace("        self.scale = config.scale\n", "")
    result = run_scan({"host/engine.py": old}, {"host/engine.py": new}, {"plug/patch.py": _MIRROR, **PATCHING})
    gone = [f for f in result.findings if f.args.get("name") == "scale"]
    assert [(f.code, f.level, f.status) for f in gone] == [("PP1202", Severity.ERROR, Status.DRIFT)]
    finding = gone[0]
    assert (finding.plugin.path, finding.plugin.line, finding.plugin.unit) == ("plug/patch.py", 9, "EnginePatch.step")
    assert finding.subject == "host.engine.Engine.scale"
    line = old.splitlines().index("        self.scale = config.scale") + 1
    assert (finding.old.path, finding.old.line, finding.old.snippet) == ("host/engine.py", line,
                                                                         "self.scale = config.scale")
    assert finding.new is None
