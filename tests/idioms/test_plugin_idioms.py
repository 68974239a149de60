"""Patching idioms of real vLLM plugins beyond ArcticInference: each with a positive and a negative twin.

(The README's patching-idioms table lists them, with the real release each was found in.)
"""

from __future__ import annotations

import pytest

from harness import expect, run_scan
from pinport.checks.call_binding import CallsCheck
from pinport.checks.undefined import UndefinedCheck

# -- CustomOp out-of-tree replacement: the host builds the plugin's class instead (vllm-rbln) --

CUSTOM_OP = """
class CustomOp:
    @classmethod
    def register_oot(cls, layer_cls=None, name=None):
        return layer_cls


class MethodBase:
    def apply(self, layer, x, topk_weights, topk_ids):
        raise NotImplementedError


class Unquantized(MethodBase, CustomOp):
    def apply(self, layer, x, topk_weights, topk_ids):
        return x


class Runner:
    @property
    def quant_method(self) -> MethodBase:
        return Unquantized()
"""

PLUGIN_METHOD = """
from host.ops import Unquantized


class MyUnquantized(Unquantized):
    def apply(self, layer, x, router_logits):
        return x
"""

PLUGIN_RUNNER = """
from host.ops import Runner


class MyRunner(Runner):
    def forward(self, x, logits):
        return self.quant_method.apply(layer=self, x=x, router_logits=logits)
"""


@pytest.mark.parametrize(("register", "expected"), [
    # installed through a plugin helper that calls Base.register_oot(cls), as vllm-rbln does
    ("from host.ops import Unquantized\nfrom plug.method import MyUnquantized\n\n\n"
     "def _register(base, cls):\n    base.register_oot(cls)\n\n\n"
     "def register():\n    _register(Unquantized, MyUnquantized)\n",
     ["PP0301 warning latent", "PP0301 warning latent", "PP0302 warning latent"]),
    # called directly
    ("from host.ops import Unquantized\nfrom plug.method import MyUnquantized\n\n\n"
     "def register():\n    Unquantized.register_oot(MyUnquantized)\n",
     ["PP0301 warning latent", "PP0301 warning latent", "PP0302 warning latent"]),
    # negative twin: the plugin class exists but is never installed; the host's class rejects the call
    ("def register():\n    pass\n",
     ["PP0301 error latent", "PP0301 error latent", "PP0302 error latent"]),
])
def test_register_oot_replacement_takes_the_call(register, expected):
    host = {"host/ops.py": CUSTOM_OP}
    result = run_scan(host, host, {"plug/method.py": PLUGIN_METHOD, "plug/runner.py": PLUGIN_RUNNER,
                                   "plug/boot.py": register}, checks=(CallsCheck(),))
    expect(result, expected)
    if "warning" in expected[0]:
        assert all("`MyUnquantized.apply`" in f.details[0] for f in result.findings)


def test_decorator_form_of_register_oot_is_discovered():
    from harness import load_inline_models
    plugin = {"plug/method.py": "from host.ops import Unquantized\n\n\n@Unquantized.register_oot\n"
                                "class Mine(Unquantized):\n    pass\n\n\n"
                                "@Unquantized.register_oot(name='Other')\nclass Named(Unquantized):\n    pass\n"}
    host = {"host/ops.py": CUSTOM_OP}
    with load_inline_models(host, host, plugin) as (models, _):
        found = [(r.host_class, r.plugin_class, r.site.line) for r in models.plugin.surface.replacements]
    assert found == [("host.ops.Unquantized", "Mine", 5), ("host.ops.Unquantized", "Named", 10)]


# -- a host attribute set by a multi-line annotated assignment (vllm-rbln on BlockHashToBlockMap) --

MAP_MULTILINE = """
class BlockMap:
    def __init__(self):
        self._cache: dict[
            int, list[int] | dict[int, int]
        ] = {}
"""
MAP_NO_CACHE = """
class BlockMap:
    def __init__(self):
        self._other: dict[
            int, int
        ] = {}
"""
USES_CACHE = "from host.pool import BlockMap\n\n\nclass Mine(BlockMap):\n    def get(self, k):\n        return self._cache.get(k)\n"


@pytest.mark.parametrize(("host", "expected"), [
    (MAP_MULTILINE, ["no PP0051"]),
    (MAP_NO_CACHE, ["PP0051 error latent"]),
])
def test_multiline_annotated_self_assignment_defines_the_attribute(host, expected):
    trees = {"host/pool.py": host}
    expect(run_scan(trees, trees, {"plug/m.py": USES_CACHE}, checks=(UndefinedCheck(),)), expected)
