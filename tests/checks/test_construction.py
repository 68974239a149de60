"""Host registries that never build what the plugin hands them (plugin/construction.py): a constructor
mismatch is a warning only where a host construction can reach it, info where only plugin code builds
the class. Each rule has a reachable twin (the warning stays)."""

from __future__ import annotations

import pytest

from harness import run_scan
from pinport.checks.override_signature import SignaturesCheck

OP_HOST = """
op_registry = {{}}


class CustomOp:
    def __init__(self, *, enforce_enable=False):
        self.enforce_enable = enforce_enable

    @classmethod
    def register(cls, name):
        def decorator(op_cls):
            assert name not in op_registry
            op_cls.name = name
            {store}
            return op_cls

        return decorator
"""
CONFIG_HOST = "from host.custom_op import op_registry\n\n\ndef check(names):\n    return [n for n in names if n {read}]\n"
OP_PLUGIN = {
    "plug/mixer.py": "from host.custom_op import CustomOp\n\n\n@CustomOp.register(\"my_mixer\")\nclass Mixer(CustomOp):\n"
                     "    def __init__(self, size):\n        super().__init__()\n        self.size = size\n",
    "plug/layers.py": "from plug.mixer import Mixer\n\n\nclass Layer:\n    def __init__(self, size):\n"
                      "        self.mixer = Mixer(size)\n",
}


def _mixer(result) -> list[tuple]:
    return [(f.code, f.level.value, f.status.value, f.plugin.path, f.plugin.line, f.args.get("param"))
            for f in result.findings if f.plugin and f.plugin.path == "plug/mixer.py"]


@pytest.mark.parametrize(("store", "read", "level"), [
    # the decorator files the class by name and the host only tests names against the table: it builds none,
    # so only the plugin's Layer builds a Mixer (with its own arguments)
    ("op_registry[name] = op_cls", "not in op_registry", "info"),
    # the same filing, but the host takes a class out of the table and builds it: a host construction
    # that passes `enforce_enable` reaches the plugin's constructor
    ("op_registry[name] = op_cls", "in op_registry and op_registry[n](enforce_enable=True)", "warning"),
    # the decorator hands the class to a host function of its own: what that does with it is not followed
    ("op_registry[name] = op_cls\n            _instances.append(op_cls())", "not in op_registry", "warning"),
    # the decorator builds the class itself
    ("op_registry[name] = op_cls(enforce_enable=True)", "not in op_registry", "warning"),
])
def test_a_decorator_that_only_files_the_class_builds_none(store, read, level):
    host = {"host/custom_op.py": OP_HOST.format(store=store) + "\n\n_instances = []\n",
            "host/config.py": CONFIG_HOST.format(read=read)}
    result = run_scan(host, host, OP_PLUGIN, checks=(SignaturesCheck(),))
    assert _mixer(result) == [("PP0101", level, "latent", "plug/mixer.py", 6, "enforce_enable"),
                              ("PP0201", level, "latent", "plug/mixer.py", 6, "size")]
