"""Patch registries naming their target by string, and declarative patch classes (vllm-rbln's
`register_patch(target=...)`): the object lands on the host path, and `self` is the target class."""

from __future__ import annotations

import pytest

from harness import expect, run_scan
from pinport.checks.aliases import AliasesCheck
from pinport.checks.instance_attributes import AttributesCheck
from pinport.checks.override_signature import SignaturesCheck

# the host's executor reaches `execute` by name, where no call site is judged: each mismatch keeps its level
_RUN = "\n\ndef run(worker):\n    return getattr(worker, 'execute')\n"
OLD = {"host/worker.py": "class Worker:\n    def __init__(self):\n        self.device = 0\n\n"
                         "    def execute(self, batch):\n        return batch\n" + _RUN}
NEW = {"host/worker.py": "class Worker:\n    def __init__(self):\n        self.devices = [0]\n\n"
                         "    def execute(self, batch, step):\n        return batch\n" + _RUN}
REGISTRY = ("def register_patch(*, target, reason=''):\n    return lambda obj: obj\n\n\n"
            "def patch(module, attr):\n    return lambda obj: obj\n\n\n"
            "def timed(label):\n    return lambda obj: obj\n")
BODY = "def execute(self, batch):\n    return self.device\n"


@pytest.mark.parametrize(("src", "expected"), [
    # keyword target, the full dotted path (vllm-rbln)
    ("from plug.registry import register_patch\n\n\n"
     "@register_patch(target='host.worker.Worker.execute', reason='x')\n" + BODY,
     ["PP0101 warning drift", "PP0901 error drift"]),
    # module and attribute apart
    ("from plug.registry import patch\n\n\n@patch('host.worker', 'Worker.execute')\n" + BODY,
     ["PP0101 warning drift", "PP0901 error drift"]),
    # the decorator factory applied by hand
    ("from plug.registry import register_patch\n\n\n" + BODY +
     "\n\nregister_patch(target='host.worker.Worker.execute')(execute)\n",
     ["PP0101 warning drift", "PP0901 error drift"]),
    # negative twin: a string argument of a decorator that does not patch is a label
    ("from plug.registry import timed\n\n\n@timed('host.worker.Worker.execute')\n" + BODY,
     ["no PP0101", "no PP0901"]),
])
def test_string_target_decorator_patches_the_host_member(src, expected):
    plugin = {"plug/registry.py": REGISTRY, "plug/patches.py": src}
    expect(run_scan(OLD, NEW, plugin, checks=(SignaturesCheck(), AttributesCheck())), expected)


DECLARATIVE = """
class PatchBase:
    pass


class ExecutePatch(PatchBase):
    target_module = "{module}"
    target_class = "{cls}"
    min_version = "1.0"

    def execute(self, batch):
        return self.device
"""


@pytest.mark.parametrize(("module", "cls", "expected"), [
    ("host.worker", "Worker", ["PP0101 warning drift", "PP0901 error drift"]),
    # the stated target names a class the host lacks: the target itself is the finding
    ("host.worker", "Scheduler", ["PP0003 error latent", "no PP0101", "no PP0901"]),
    # negative twin: a module outside the host is no patch target
    ("other.worker", "Worker", ["no PP0003", "no PP0101", "no PP0901"]),
])
def test_declarative_patch_class_states_its_target(module, cls, expected):
    plugin = {"plug/patches.py": DECLARATIVE.format(module=module, cls=cls)}
    expect(run_scan(OLD, NEW, plugin, checks=(SignaturesCheck(), AttributesCheck(), AliasesCheck())), expected)


CONFIG = {"host/config.py": "class Config:\n    @staticmethod\n    def make(target, size):\n        return size\n\n"
                            "    def build(self):\n        return Config.make(self, 2)\n"}


@pytest.mark.parametrize(("params", "expected"), [
    # a plain function installed in place of a staticmethod, called through the class: it gets both
    # arguments (vllm-rbln 0.12.0 `patches/speculative_config.py:43`, SpeculativeConfig.create_draft_parallel_config)
    ("target, size", ["no PP0111"]),
    # negative twin: the replacement takes one argument fewer than the host passes
    ("size", ["PP0111 error latent"]),
])
def test_function_set_in_place_of_a_staticmethod_takes_every_argument(params, expected):
    from pinport.checks.replaced_callers import ReplacedCallersCheck
    src = ("def register_patch(*, target):\n    return lambda f: f\n\n\n"
           f"@register_patch(target='host.config.Config.make')\ndef make({params}):\n    return None\n")
    expect(run_scan(CONFIG, CONFIG, {"plug/patches.py": src}, checks=(ReplacedCallersCheck(),)), expected)


@pytest.mark.parametrize(("build", "expected"), [
    # `build=True`: the decorated function only builds the replacement; its own signature says nothing
    (", build=True", ["no PP0101"]),
    # negative twin: the function itself is installed, and takes neither `batch` nor `step`
    ("", ["PP0101 warning latent", "PP0101 warning drift"]),
])
def test_built_registry_replacement_is_not_judged_by_its_factory(build, expected):
    src = ("def register_patch(*, target, build=False):\n    return lambda f: f\n\n\n"
           f"@register_patch(target='host.worker.Worker.execute'{build})\ndef make_execute():\n"
           "    return lambda self, batch, step: batch\n")
    expect(run_scan(OLD, NEW, {"plug/patches.py": src}, checks=(SignaturesCheck(),)), expected)
