"""Members given to `self` by something other than the class itself: a *host* helper handed `self`
(`init_cache(self)` assigning `layer._cache = ...`, `quant_method.create_weights(self)` calling
`layer.register_parameter("w", ...)`), and bases from outside plugin and host (`torch.nn.Module`
next to a host base). Reading such a member is neither undefined (PP0051) nor unset (PP0901)."""

from __future__ import annotations

import pytest

from harness import expect, run_scan
from pinport.checks.instance_attributes import AttributesCheck
from pinport.checks.undefined import UndefinedCheck

# -- a host helper that receives the plugin method's `self` ---------------------------------------

HELPERS = """
def init_cache(layer):
    layer._cache = {}


def init_scale(layer, value):
    setattr(layer, "_scale", value)


def init_both(layer):
    init_cache(layer)  # handed on: followed a few helpers deep
"""
METHOD = """
class Method:
    def create_weights(self, layer, size: int):
        layer.register_parameter("w13_weight", size)
        layer.register_buffer("_bias", None)


class Layer:
    def __init__(self):
        self.quant_method = Method()
"""


ASSIGNED = ("from host.helpers import init_both, init_cache, init_scale\nfrom host.layer import Layer\n\n\n"
            "def forward(self):\n    {body}\n\n\ndef apply():\n    Layer.forward = forward\n")  # unit: forward
SUBCLASS = "from host.layer import Layer\n\n\nclass Mine(Layer):\n    def forward(self):\n        {body}\n"


@pytest.mark.parametrize(("plugin", "body", "expected"), [
    (ASSIGNED, "init_cache(self)\n    return self._cache", ["no PP0051"]),  # `layer._cache = ...`
    (ASSIGNED, "init_scale(self, 2)\n    return self._scale", ["no PP0051"]),  # setattr(layer, "_scale", ...)
    (ASSIGNED, "init_both(layer=self)\n    return self._cache", ["no PP0051"]),  # by keyword, one helper deeper
    # `self.quant_method.create_weights(self, ...)`: register_parameter / register_buffer on its `layer`
    (SUBCLASS, "self.quant_method.create_weights(self, 4)\n        return self.w13_weight, self._bias",
     ["no PP0051"]),
    # negative twins: the helper sets other names, or is handed something else
    (ASSIGNED, "init_cache(self)\n    return self._scale", ["PP0051 error latent"]),
    (ASSIGNED, "init_cache(object())\n    return self._cache", ["PP0051 error latent"]),
    (SUBCLASS, "self.quant_method.create_weights(None, 4)\n        return self.w13_weight", ["PP0051 error latent"]),
])
def test_a_host_helper_handed_self_sets_its_attributes(plugin, body, expected):
    host = {"host/helpers.py": HELPERS, "host/layer.py": METHOD}
    result = run_scan(host, host, {"plug/patch.py": plugin.format(body=body)}, checks=(UndefinedCheck(),))
    expect(result, expected)
    if expected[0].startswith("PP0051"):
        (finding,) = result.findings
        assert (finding.plugin.path, finding.plugin.unit, finding.subject.rpartition(".")[0]) == (
            "plug/patch.py", "forward" if plugin is ASSIGNED else "Mine.forward", "host.layer.Layer")


# The host class moved the assignment into a helper its own __init__ hands `self` to (NEW): the
# attribute is still set, so a plugin patch reading it is no PP0901.
OLD_RUNNER = "class Runner:\n    def __init__(self):\n        self._steps = 0\n"
NEW_RUNNER = ("def reset(runner):\n    runner.{name} = 0\n\n\n"
              "class Runner:\n    def __init__(self):\n        reset(self)\n")
READS_STEPS = ("from host.runner import Runner\n\n\ndef step(self):\n    return self._steps + 1\n\n\n"
               "def apply():\n    Runner.step = step\n")


@pytest.mark.parametrize(("name", "expected"), [
    ("_steps", ["no PP0901"]),
    ("_count", ["PP0901 error drift"]),  # negative twin: the helper sets another attribute
])
def test_host_class_setting_an_attribute_through_a_helper_still_sets_it(name, expected):
    result = run_scan({"host/runner.py": OLD_RUNNER}, {"host/runner.py": NEW_RUNNER.format(name=name)},
                      {"plug/patch.py": READS_STEPS}, checks=(AttributesCheck(),))
    expect(result, expected)
    if expected[0].startswith("PP0901"):
        (finding,) = result.findings
        assert (finding.plugin.unit, finding.args["name"], finding.old.path, finding.old.line) == (
            "step", "_steps", "host/runner.py", 3)


# -- a base from outside plugin and host next to a host base --------------------------------------

HOST_LAYER = {"host/layer.py": "class Layer:\n    def __init__(self):\n        self.size = 1\n"}
MIXED = """
from torch import nn

from host.layer import Layer


class Mine({bases}):
    def forward(self, x):
        return [p for p in self.named_parameters()], self.training
"""


@pytest.mark.parametrize(("bases", "expected"), [
    ("Layer, nn.Module", ["no PP0051"]),  # torch.nn.Module may give both
    ("nn.Module, Layer", ["no PP0051"]),
    ("Layer", ["PP0051 error latent", "PP0051 error latent"]),  # negative twin: the host class alone
])
def test_a_third_party_base_next_to_a_host_base_may_give_members(bases, expected):
    result = run_scan(HOST_LAYER, HOST_LAYER, {"plug/mine.py": MIXED.format(bases=bases)}, checks=(UndefinedCheck(),))
    expect(result, expected)
    assert sorted(f.args["name"] for f in result.findings) == (["named_parameters", "training"] if result.findings
                                                               else [])


OLD_LAYER = {"host/layer.py": "class Layer:\n    def __init__(self):\n        self.weight = None\n"}
NEW_LAYER = {"host/layer.py": "class Layer:\n    def __init__(self):\n        self.size = 1\n"}
READS_WEIGHT = "from torch import nn\n\nfrom host.layer import Layer\n\n\nclass Mine({bases}):\n" \
               "    def scale(self):\n        return self.weight\n"


@pytest.mark.parametrize(("bases", "expected"), [
    ("Layer, nn.Module", ["no PP0901"]),  # a parameter nn.Module registers may stand behind `self.weight`
    ("Layer", ["PP0901 error drift"]),  # negative twin
])
def test_a_third_party_base_keeps_a_dropped_host_attribute_unjudged(bases, expected):
    result = run_scan(OLD_LAYER, NEW_LAYER, {"plug/mine.py": READS_WEIGHT.format(bases=bases)},
                      checks=(AttributesCheck(),))
    expect(result, expected)
