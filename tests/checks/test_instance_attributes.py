"""Instance attributes (#9): `self.X` still set by the host class, typed host objects, changed assignments."""

import pytest

from harness import expect, only, run_scan
from pinport.checks.instance_attributes import AttributesCheck

CHECK = (AttributesCheck(),)
PATCHING = {"plug/patching.py": "class ArcticPatch:\n    pass\n"}
SET = "class Runner:\n    def __init__(self):\n        self.device = 0\n        self.pin_memory = True\n"
UNSET = "class Runner:\n    def __init__(self):\n        self.device = 0\n"


def patch(body: str) -> dict[str, str]:
    return {"plug/patch.py": "from plug.patching import ArcticPatch\nfrom host.runner import Runner\n\n\n"
                             "class RunnerPatch(ArcticPatch[Runner]):\n" + body, **PATCHING}


READ = "    def step(self):\n        return self.pin_memory\n"


@pytest.mark.parametrize(("old", "new", "plugin", "expected"), [
    # the NEW base no longer sets it
    (SET, UNSET, patch(READ), ["PP0901 error drift"]),
    (SET, SET, patch(READ), ["no PP0901"]),
    # the plugin sets it itself (in this method or another member of the patch)
    (SET, UNSET, patch("    def step(self):\n        self.pin_memory = False\n        return self.pin_memory\n"), ["no PP0901"]),
    (SET, UNSET, patch(READ + "    def __init__(self):\n        self.pin_memory = False\n"), ["no PP0901"]),
    # a class attribute of the patch class is copied onto the target
    (SET, UNSET, patch("    pin_memory = True\n" + READ), ["no PP0901"]),
    # guarded reads
    (SET, UNSET, patch("    def step(self):\n        return getattr(self, 'pin_memory', False)\n"), ["no PP0901"]),
    (SET, UNSET, patch("    def step(self):\n        if hasattr(self, 'pin_memory'):\n"
                       "            return self.pin_memory\n"), ["no PP0901"]),
    (SET, UNSET, patch("    def step(self):\n        try:\n            return self.pin_memory\n"
                       "        except AttributeError:\n            return False\n"), ["no PP0901"]),
    # NEW defines it another way: a dataclass-style field, a property, a base class
    (SET, "class Runner:\n    pin_memory: bool = False\n", patch(READ), ["no PP0901"]),
    (SET, "class Runner:\n    @property\n    def pin_memory(self):\n        return True\n", patch(READ), ["no PP0901"]),
    # a nested function that closes over self reads it too
    (SET, UNSET, patch("    def step(self):\n        def inner():\n            return self.pin_memory\n"
                       "        return inner()\n"), ["PP0901 error drift"]),
    # a nested function with its own `self` is another object
    (SET, UNSET, patch("    def step(self):\n        def inner(self):\n            return self.pin_memory\n"
                       "        return inner\n"), ["no PP0901"]),
    # an unknowable base (external, not inert) may set anything
    ("import torch\n\n" + SET.replace("class Runner:", "class Runner(torch.nn.Module):"),
     "import torch\n\n" + UNSET.replace("class Runner:", "class Runner(torch.nn.Module):"), patch(READ), ["no PP0901"]),
    # ... but abc.ABC adds nothing
    ("from abc import ABC\n\n" + SET.replace("class Runner:", "class Runner(ABC):"),
     "from abc import ABC\n\n" + UNSET.replace("class Runner:", "class Runner(ABC):"), patch(READ), ["PP0901 error drift"]),
])
def test_self_attribute_kinds(old, new, plugin, expected):
    expect(run_scan({"host/runner.py": old}, {"host/runner.py": new}, plugin, checks=CHECK), expected)


def test_not_set_evidence_points_at_the_old_assignment():
    result = run_scan({"host/runner.py": SET}, {"host/runner.py": UNSET}, patch(READ), checks=CHECK)
    expect(result, ["PP0901 error drift RunnerPatch.step:7"], at=True)
    finding = only(result, "PP0901")
    assert finding.args["name"] == "pin_memory"
    assert finding.plugin.path == "plug/patch.py" and finding.plugin.line == 7
    assert finding.plugin.unit == "RunnerPatch.step"
    assert (finding.old.path, finding.old.line) == ("host/runner.py", 4)
    assert (finding.new.path, finding.new.line) == ("host/runner.py", 1)
    assert finding.subject == "host.runner.Runner.pin_memory"


def test_inherited_assignment_counts_through_the_mro():
    new = {"host/base.py": "class Base:\n    def __init__(self):\n        self.pin_memory = True\n",
           "host/runner.py": "from host.base import Base\n\nclass Runner(Base):\n    pass\n"}
    expect(run_scan({"host/runner.py": SET}, new, patch(READ), checks=CHECK), ["no PP0901"])


def test_subclass_override_and_assigned_function():
    plugin = {"plug/sub.py": "from host.runner import Runner\n\n\nclass MyRunner(Runner):\n"
                             "    def step(self):\n        return self.pin_memory\n"}
    expect(run_scan({"host/runner.py": SET}, {"host/runner.py": UNSET}, plugin, checks=CHECK), ["PP0901 error drift"])
    plugin = {"plug/sub.py": "from host.runner import Runner\n\n\ndef step(self):\n    return self.pin_memory\n\n\n"
                             "Runner.step = step\n"}
    expect(run_scan({"host/runner.py": SET}, {"host/runner.py": UNSET}, plugin, checks=CHECK),
           ["PP0901 error drift step:5"], at=True)


def test_one_finding_per_unit_and_attribute():
    body = "    def step(self):\n        a = self.pin_memory\n        return self.pin_memory, self.gone\n"
    old = SET.replace("self.device = 0", "self.gone = 1")
    result = run_scan({"host/runner.py": old}, {"host/runner.py": UNSET}, patch(body), checks=CHECK)
    expect(result, ["PP0901 error drift", "PP0901 error drift"])
    assert sorted(f.args["name"] for f in result.findings) == ["gone", "pin_memory"]


# -- typed host objects --------------------------------------------------------------------------------
CONTEXT_OLD = ("class ForwardContext:\n    attn_metadata: dict\n    virtual_engine: int\n\n\n"
               "def get_forward_context() -> ForwardContext:\n    return ForwardContext()\n")
CONTEXT_NEW = ("class ForwardContext:\n    attn_metadata: dict\n\n\n"
               "def get_forward_context() -> ForwardContext:\n    return ForwardContext()\n")
USES = {
    "annotated": "    ctx: ForwardContext = get_forward_context()\n    return ctx.virtual_engine\n",
    "assigned": "    ctx = get_forward_context()\n    return ctx.virtual_engine\n",
    "direct": "    return get_forward_context().virtual_engine\n",
    "parameter": None,
}


@pytest.mark.parametrize("how", sorted(USES))
@pytest.mark.parametrize(("new", "expected"), [(CONTEXT_NEW, ["PP0902 error drift"]), (CONTEXT_OLD, ["no PP0902"])])
def test_typed_host_object_reads(how, new, expected):
    head = "from host.forward_context import ForwardContext, get_forward_context\n\n\n"
    body = USES[how]
    src = head + ("def f(ctx: ForwardContext):\n    return ctx.virtual_engine\n" if body is None
                  else "def f():\n" + body)
    result = run_scan({"host/forward_context.py": CONTEXT_OLD}, {"host/forward_context.py": new},
                      {"plug/use.py": src}, checks=CHECK)
    expect(result, expected)
    if not expected[0].startswith("no "):
        finding = only(result, "PP0902")
        assert (finding.old.path, finding.old.line) == ("host/forward_context.py", 3)
        assert finding.plugin.path == "plug/use.py" and finding.args["name"] == "virtual_engine"


def test_reassigned_local_is_not_typed():
    src = ("from host.forward_context import get_forward_context\n\n\ndef f(other):\n"
           "    ctx = get_forward_context()\n    ctx = other\n    return ctx.virtual_engine\n")
    expect(run_scan({"host/forward_context.py": CONTEXT_OLD}, {"host/forward_context.py": CONTEXT_NEW},
                    {"plug/use.py": src}, checks=CHECK), ["no PP0902"])


# -- changed assignments -------------------------------------------------------------------------------------
BUFFER = ("class CpuGpuBuffer:\n    def __init__(self, n):\n        self.gpu = n\n        self.cpu = n\n"
          "        self.np = n\n\n    def copy_to_gpu(self):\n        pass\n\n\n")
RUNNER_BUFFER = (BUFFER + "class Runner:\n    def __init__(self):\n        self.positions = self._make_buffer(8)\n\n"
                 "    def _make_buffer(self, n) -> CpuGpuBuffer:\n        return CpuGpuBuffer(n)\n")
RUNNER_TENSOR = ("import torch\n\n\n" + BUFFER + "class Runner:\n    def __init__(self):\n"
                 "        self.positions = torch.zeros(8)\n")
RUNNER_OTHER = ("def make(n):\n    return n\n\n\nclass Runner:\n    def __init__(self):\n"
                "        self.positions = make(8)\n")
USE_GPU = "    def step(self):\n        return self.positions.gpu[:4]\n"
PLAIN = ("torch.",)  # host expressions that build plain tensors (the plain-values setting)


@pytest.mark.parametrize(("new", "expected"), [
    (RUNNER_TENSOR, ["PP0904 error drift"]),  # a buffer became a plain tensor: `.gpu` is gone
    (RUNNER_OTHER, ["PP0903 warning drift"]),  # built another way, kind unknown: a warning
    (RUNNER_BUFFER, ["no PP0903", "no PP0904"]),
])
def test_assignment_changes(new, expected):
    result = run_scan({"host/runner.py": RUNNER_BUFFER}, {"host/runner.py": new}, patch(USE_GPU), checks=CHECK,
                      plain_values=PLAIN)
    expect(result, expected)
    if expected == ["PP0904 error drift"]:
        finding = only(result, "PP0904")
        assert finding.args["members"] == "gpu" and finding.args["old_type"] == "CpuGpuBuffer"
        assert finding.status.value == "drift"
        assert (finding.old.path, finding.old.line) == ("host/runner.py", 13)
        assert finding.new.line == 16 and "torch.zeros" in finding.new.snippet
        assert finding.plugin.line == 7


def test_only_the_members_the_new_value_lacks_are_named():
    body = "    def step(self):\n        return self.positions.gpu[:4], self.positions.shape\n"
    result = run_scan({"host/runner.py": RUNNER_BUFFER}, {"host/runner.py": RUNNER_TENSOR}, patch(body), checks=CHECK,
                      plain_values=PLAIN)
    expect(result, ["PP0904 error drift"])
    assert only(result, "PP0904").args["members"] == "gpu"  # `.shape` was never the buffer's


def test_assignment_change_needs_member_use():
    body = "    def step(self):\n        return self.positions\n"
    expect(run_scan({"host/runner.py": RUNNER_BUFFER}, {"host/runner.py": RUNNER_TENSOR}, patch(body),
                    checks=CHECK), ["no PP0904"])
