"""The caller graph behind warnings (plugin/host_paths.py): a host call that would fail against an
override counts only where some host path the plugin has not replaced still runs it."""

from __future__ import annotations

import pytest

from harness import expect, run_scan
from pinport.checks.override_signature import SignaturesCheck

# The shape of vLLM 0.24's MoE path: RoutedExperts.forward_modular calls quant_method.apply with
# keywords; it is reached only from MoERunner._forward_impl, called by a function registered as a
# torch custom op and picked by _select_forward into self._forward_entry, which only MoERunner.forward
# calls. The plugin installs its runner in place of MoERunner (register_oot) overriding forward.
HOST = """
import torch


def register_op(op_name, op_func):
    pass


class CustomOp:
    @classmethod
    def register_oot(cls, layer_cls=None, name=None):
        return layer_cls


class Method:
    def apply(self, layer, x, topk):
        return x


class Experts:
    def __init__(self, method: Method):
        self.method = method

    def forward_modular(self, x, topk):
        return self.method.apply(layer=self, x=x, topk=topk)


def _entry(layer, x):
    return layer._forward_impl(x)


register_op(op_name="moe_entry", op_func=_entry)


class Runner(CustomOp):
    def __init__(self, flag):
        self.experts = Experts(Method())
        self._forward_entry = self._select_forward(flag)

    def _select_forward(self, flag):
        return torch.ops.host.moe_entry if flag else _entry

    def forward(self, x):
        return self._forward_entry(self, x)

    def _forward_impl(self, x):
        return self.experts.forward_modular(x, 1)
"""

PLUGIN = """
from host.moe import Method, Runner


class MyMethod(Method):
    def apply(self, layer, x, logits):
        return x


class MyRunner(Runner):
    def forward(self, x):
{body}


def install():
    Runner.register_oot(MyRunner)
    Method.register_oot(MyMethod)
"""

SETTINGS = {"called_implicitly": ("forward",), "op_registrars": ("register_op(op_name, op_func)",)}


@pytest.mark.parametrize(("body", "extra", "level"), [
    # every path to forward_modular runs through Runner.forward, which the plugin's stand-in overrides
    ("        return self.experts.method.apply(self, x, None)", "", "info"),
    # negative twins: a host path still reaches the failing call, so the true warning stays
    ("        self.experts.method.apply(self, x, None)\n        return super().forward(x)", "", "warning"),  # calls up
    ("        return self.experts.method.apply(self, x, None)",
     "\n\ndef drive(e: Experts):\n    return e.forward_modular(1, 2)\n", "warning"),  # another host caller
    ("        return self.experts.method.apply(self, x, None)",
     "\n\nclass Spare(Runner):\n    pass\n", "warning"),  # a host subclass inherits Runner.forward
    ("        return self.experts.method.apply(self, x, None)",
     "\n\ndef peek(r: Runner):\n    return r._forward_entry\n", "warning"),  # the op handed on
])
def test_a_failing_host_call_counts_only_where_an_unreplaced_host_path_runs_it(body, extra, level):
    host = {"host/moe.py": HOST + extra}
    result = run_scan(host, host, {"plug/moe.py": PLUGIN.format(body=body)}, checks=(SignaturesCheck(),), **SETTINGS)
    # (`logits` is passed by the plugin's own call: PP0201 is info by that rule either way)
    expect(result, [f"PP0101 {level} latent MyMethod.apply:5", "PP0201 info latent MyMethod.apply:5"], at=True)
    assert [(f.args["param"], f.new.path, f.new.line, f.old.path, f.old.line) for f in result.findings] == [
        ("topk", "host/moe.py", 15, "host/moe.py", 15), ("logits", "host/moe.py", 15, "host/moe.py", 15)]


def test_without_the_op_registrar_setting_the_registered_function_is_handed_on():
    # `register_op(op_name=..., op_func=_entry)` unknown: `_entry` may run from anywhere, so the warning stays
    host = {"host/moe.py": HOST}
    plugin = {"plug/moe.py": PLUGIN.format(body="        return self.experts.method.apply(self, x, None)")}
    result = run_scan(host, host, plugin, checks=(SignaturesCheck(),), called_implicitly=("forward",))
    expect(result, ["PP0101 warning latent MyMethod.apply:5", "PP0201 info latent MyMethod.apply:5"], at=True)


@pytest.mark.parametrize(("kernel", "level"), [
    # `self.kernel.apply(...)`: `kernel` is only ever a Kernel (a function's annotated result): not the plugin's
    ("def make_kernel() -> Kernel:\n    return Kernel()\n", "info"),
    # an unannotated factory, by what it returns: a construction
    ("def make_kernel():\n    return Kernel()\n", "info"),
    # negative twin: a factory returning what it is handed may return anything
    ("def make_kernel(kernel=None):\n    return kernel\n", "warning"),
])
def test_a_receiver_kept_in_self_attr_is_typed_by_its_assignments(kernel, level):
    host = {"host/ops.py": "class Kernel:\n    def apply(self, a, b, c=None):\n        pass\n\n\n" + kernel +
            "\n\nclass Method:\n    def __init__(self):\n        self.kernel = None\n\n"
            "    def setup(self):\n        self.kernel = make_kernel()\n\n"
            "    def apply(self, layer, x, topk):\n        return x\n\n"
            "    def run(self, x):\n        return self.kernel.apply(x, 1, None)\n"}  # Method.apply could take it too
    plugin = {"plug/ops.py": "from host.ops import Method\n\n\nclass Mine(Method):\n"
                             "    def apply(self, layer, x):\n        return x\n\n\n"
                             "def build():\n    return Mine()\n"}
    result = run_scan(host, host, plugin, checks=(SignaturesCheck(),))
    expect(result, [f"PP0101 {level} latent Mine.apply:5"], at=True)


def test_an_iterated_read_of_the_name_is_no_reference_to_the_method():
    # `for a in scheme.apply` reads a list of that name (a method cannot be iterated): not a callback
    host = {"host/ops.py": "class Method:\n    def apply(self, layer, x, topk=None):\n        return x\n\n\n"
            "def schemes(scheme):\n    return [a for a in scheme.apply]\n"}
    plugin = {"plug/ops.py": "from host.ops import Method\n\n\nclass Mine(Method):\n"
                             "    def apply(self, layer, x):\n        return x\n"}
    result = run_scan(host, host, plugin, checks=(SignaturesCheck(),))
    expect(result, ["PP0101 info latent Mine.apply:5"], at=True)
    bare = {"host/ops.py": host["host/ops.py"].replace("[a for a in scheme.apply]", "scheme.apply")}
    expect(run_scan(bare, bare, plugin, checks=(SignaturesCheck(),)), ["PP0101 warning latent Mine.apply:5"], at=True)
