"""Strings in a host's closed sets (#7): Literal types through aliases, Enum members, checked name tuples."""

import pytest

from harness import expect, only, run_scan
from pinport.checks.closed_values import ClosedValuesCheck

PATCHING = {"plug/patching.py": "class ArcticPatch:\n    pass\n"}
USE = "plug/use.py"

SPEC = """
from typing import Literal

from host.utils import config

EagleTypes = Literal["eagle", "eagle3"]
Method = Literal[
    "ngram",
    {extra}
    EagleTypes,
]


@config
class SpecConfig:
    method: Method | None = None
    size: int = 0


def pick(method: Method):
    pass


BACKENDS = ("flash", {backend})


def backend(name):
    if name not in BACKENDS:
        raise ValueError(name)


class Runner:
    def __init__(self, spec: SpecConfig):
        self.spec = spec
"""
UTILS = "def config(cls):\n    return cls\n"
ENUM = "import enum\n\n\nclass Mode(enum.Enum):\n    FAST = 'fast'\n    {extra}\n"


def host(extra: str = "", backend: str = "", mode: str = "") -> dict[str, str]:
    return {"host/spec.py": SPEC.format(extra=extra, backend=backend), "host/utils.py": UTILS,
            "host/mode.py": ENUM.format(extra=mode or "pass")}


OLD = host('"mlp_speculator",', '"xformers"', "SAFE = 'safe'")
NEW = host()
IMPORTS = ("from plug.patching import ArcticPatch\nfrom host.spec import Runner, SpecConfig, backend, pick\n"
           "from host.mode import Mode\n\n\n")


def scan(plugin: str, old=OLD, new=NEW):
    return run_scan(old, new, {**PATCHING, USE: IMPORTS + plugin}, checks=(ClosedValuesCheck(),))


@pytest.mark.parametrize(("plugin", "expected"), [
    # a validated config's Literal field (through two aliases): constructing it with a dropped value raises
    ("def go():\n    return SpecConfig(method='mlp_speculator')\n", ["PP0708 error drift go:7"]),
    ("def go():\n    return SpecConfig(method='eagle3')\n", ["no PP0708"]),
    # values in neither set are the plugin's own (it extends the set itself)
    ("def go():\n    return SpecConfig(method='arctic')\n", ["no PP0708"]),
    # a plain function's annotation is not enforced: a warning
    ("def go():\n    return pick('mlp_speculator')\n", ["PP0708 warning drift go:7"]),
    # a function that checks its argument against a tuple of names raises
    ("def go():\n    return backend('xformers')\n", ["PP0708 error drift go:7"]),
    ("def go():\n    return backend('flash')\n", ["no PP0708"]),
    # behind a condition the error is a warning
    ("def go(on):\n    if on:\n        return backend('xformers')\n", ["PP0708 warning drift go:8"]),
    # assigned to, and compared with, a typed field: the code path NEW had for it is gone
    ("class SpecPatch(ArcticPatch[SpecConfig]):\n    def __post_init__(self):\n"
     "        self.method = 'mlp_speculator'\n", ["PP0708 warning drift SpecPatch.__post_init__:8"]),
    ("class RunnerPatch(ArcticPatch[Runner]):\n    def step(self):\n"
     "        return self.spec.method in ('arctic', 'mlp_speculator')\n", ["PP0708 warning drift RunnerPatch.step:8"]),
    ("class RunnerPatch(ArcticPatch[Runner]):\n    def step(self):\n"
     "        return self.spec.method == 'ngram'\n", ["no PP0708"]),
    # Enum members by name and by value
    ("def go():\n    return Mode['SAFE']\n", ["PP0708 error drift go:7"]),
    ("def go():\n    return Mode('safe')\n", ["PP0708 error drift go:7"]),
    ("def go():\n    return Mode('fast'), Mode['FAST']\n", ["no PP0708"]),
])
def test_closed_values(plugin, expected):
    expect(scan(plugin), expected, at=True)


def test_one_finding_per_file_member_and_value():
    plugin = ("class RunnerPatch(ArcticPatch[Runner]):\n    def step(self):\n"
              "        if self.spec.method == 'mlp_speculator':\n            return 1\n"
              "        return self.spec.method in ('mlp_speculator',)\n")
    result = scan(plugin)
    expect(result, ["PP0708 warning drift"])
    finding = only(result, "PP0708")
    assert finding.args == {"value": "mlp_speculator", "how": "compared with", "target": "host.spec.SpecConfig.method",
                            "name": "mlp_speculator", "label": "host 2.0"}
    assert finding.plugin.line == 8 and finding.details[1] == "also compared at line 10"
    assert finding.new.path == "host/spec.py" and finding.old.path == "host/spec.py"


def test_a_value_the_move_adds_is_fixed():
    expect(scan("def go():\n    return backend('xformers')\n", old=NEW, new=OLD), ["PP0708 error fixed"])


def test_an_assignment_leads_the_comparisons_of_the_same_value():
    plugin = ("class SpecPatch(ArcticPatch[SpecConfig]):\n    def __post_init__(self):\n"
              "        if self.method in ('arctic', 'mlp_speculator'):\n            self.method = 'mlp_speculator'\n")
    result = scan(plugin)
    expect(result, ["PP0708 warning drift SpecPatch.__post_init__:9"], at=True)
    finding = only(result, "PP0708")
    assert finding.args["how"] == "assigned to" and finding.details[1] == "also compared at line 8"
