"""Host callers of replaced members (#1): positive and unchanged twin per kind, and which calls count."""

import pytest

from harness import expect, only, run_scan
from pinport.checks.replaced_callers import ReplacedCallersCheck
from pinport.model.summary import Param, ParamKind
from pinport.plugin.callers import is_narrower

PATCHING = {"plug/patching.py": "class ArcticPatch:\n    pass\n"}
PATCH = "plug/patch.py"


def scan(old: dict[str, str], new: dict[str, str], plugin: str):
    return run_scan(old, new, {**PATCHING, PATCH: plugin}, checks=(ReplacedCallersCheck(),))


STATE_OLD = "def graph_capture(device):\n    pass\n"
STATE_NEW = "def graph_capture(device, graph_capture_context=None):\n    pass\n"
MODULE_PATCH = ("from plug.patching import ArcticPatch\nimport host.state as state\n\n\n"
                "class StatePatch(ArcticPatch[state]):\n    def graph_capture(device):\n        pass\n")


@pytest.mark.parametrize(("caller", "expected"), [
    # 1: NEW passes a keyword the module-function replacement does not take
    ("graph_capture(device=1, graph_capture_context=2)", ["PP0110 error drift"]),
    ("graph_capture(device=1)", ["no PP0110"]),
    # 1: more positional arguments than the replacement takes
    ("graph_capture(1, 2)", ["PP0111 error drift"]),
    ("graph_capture(1)", ["no PP0111"]),
])
def test_module_function_callers(caller, expected):
    runner = f"from host.state import graph_capture\n\n\ndef run():\n    {caller}\n"
    old = {"host/state.py": STATE_OLD, "host/runner.py": "def run():\n    pass\n"}
    new = {"host/state.py": STATE_NEW, "host/runner.py": runner}
    expect(scan(old, new, MODULE_PATCH), expected)


def test_caller_evidence():
    runner = "import host.state as ps\n\n\ndef run():\n    ps.graph_capture(1, graph_capture_context=2)\n"
    old = {"host/state.py": STATE_OLD}
    new = {"host/state.py": STATE_NEW, "host/runner.py": runner}
    result = scan(old, new, MODULE_PATCH)
    expect(result, ["PP0110 error drift"])
    finding = only(result, "PP0110")
    assert finding.args["name"] == "graph_capture_context" and finding.args["count"] == 1
    assert finding.subject == "host.state.graph_capture" and finding.level.value == "error"
    assert (finding.plugin.path, finding.plugin.unit) == (PATCH, "StatePatch.graph_capture")
    assert finding.details[0].startswith("host/runner.py:5 (run)")
    assert (finding.new.path, finding.new.line) == ("host/state.py", 1)
    assert finding.status.value == "drift"


RUNNER = "class Runner:\n    def initialize(self, cfg{extra}):\n        pass\n"
WORKER = ("from host.runner import Runner\n\n\nclass Worker:\n    def __init__(self):\n"
          "        self.runner = Runner()\n\n    def start(self):\n        self.runner.initialize({args})\n")
RUNNER_PATCH = ("from plug.patching import ArcticPatch\nfrom host.runner import Runner\n\n\n"
                "class RunnerPatch(ArcticPatch[Runner]):\n    def initialize{sig}:\n        pass\n")


@pytest.mark.parametrize(("sig", "args", "expected"), [
    # 1: `initialize_kv_cache(..., is_profiling=True)` against an override without it
    ("(self, cfg)", "1, is_profiling=True", ["PP0110 error drift"]),
    ("(self, cfg, is_profiling=False)", "1, is_profiling=True", ["no PP0110"]),
    ("(self, cfg)", "1, True", ["PP0111 error drift"]),
    ("(self, cfg, is_profiling=False)", "1, True", ["no PP0111"]),
    # 1: the replacement requires what callers leave out
    ("(self, cfg, is_profiling)", "1", ["PP0112 error latent"]),
    ("(self, cfg, is_profiling=False)", "1", ["no PP0112"]),
    # 1: the replacement takes the base's parameters in another order
    ("(self, is_profiling=False, cfg=None)", "1, is_profiling=True", ["PP0113 error drift"]),
    ("(self, cfg=None, is_profiling=False)", "1, is_profiling=True", ["no PP0113"]),
    # a passthrough replacement accepts anything and is not searched
    ("(self, *args, **kwargs)", "1, True, z=3", ["no PP0110", "no PP0111"]),
])
def test_method_callers_through_a_typed_attribute(sig, args, expected):
    old = {"host/runner.py": RUNNER.format(extra=""), "host/worker.py": WORKER.format(args="1")}
    new = {"host/runner.py": RUNNER.format(extra=", is_profiling=False"), "host/worker.py": WORKER.format(args=args)}
    expect(scan(old, new, RUNNER_PATCH.format(sig=sig)), expected)


@pytest.mark.parametrize(("caller", "expected"), [
    # self calls inside the class itself
    ("class Runner:\n    def initialize(self, cfg, is_profiling=False):\n        pass\n\n"
     "    def profile(self):\n        self.initialize(1, is_profiling=True)\n", ["PP0110 error drift"]),
    # a subclass calling up through super()
    ("class Runner:\n    def initialize(self, cfg, is_profiling=False):\n        pass\n\n\n"
     "class Cpu(Runner):\n    def initialize(self, cfg, is_profiling=False):\n"
     "        super().initialize(cfg, is_profiling)\n", ["PP0111 error drift"]),
    # a subclass with its own override: its callers do not reach the replacement
    ("class Runner:\n    def initialize(self, cfg, is_profiling=False):\n        pass\n\n\n"
     "class Cpu(Runner):\n    def initialize(self, cfg, is_profiling=False):\n        pass\n\n"
     "    def go(self):\n        self.initialize(1, is_profiling=True)\n", ["no PP0110"]),
    # the same method name on an unrelated class
    ("class Runner:\n    def initialize(self, cfg, is_profiling=False):\n        pass\n\n\n"
     "class Other:\n    def initialize(self, cfg, is_profiling=False):\n        pass\n\n\n"
     "def go():\n    Other().initialize(1, is_profiling=True)\n", ["no PP0110"]),
])
def test_which_calls_reach_the_replacement(caller, expected):
    old = {"host/runner.py": RUNNER.format(extra="")}
    new = {"host/runner.py": caller}
    expect(scan(old, new, RUNNER_PATCH.format(sig="(self, cfg)")), expected)


def test_constructor_callers_of_a_replaced_init():
    host = "class Layer:\n    def __init__(self, heads, prefix=''):\n        pass\n\n\ndef build():\n    return {call}\n"
    plugin = ("from plug.patching import ArcticPatch\nfrom host.layer import Layer\n\n\n"
              "class LayerPatch(ArcticPatch[Layer]):\n    def __init__(self, heads):\n        pass\n")
    old = {"host/layer.py": host.format(call="Layer(1)")}
    expect(scan(old, {"host/layer.py": host.format(call="Layer(1, prefix='x')")}, plugin), ["PP0110 error drift"])
    expect(scan(old, {"host/layer.py": host.format(call="Layer(1)")}, plugin), ["no PP0110"])


def test_assignment_replacement():
    old = {"host/runner.py": RUNNER.format(extra=", is_profiling=False"),
           "host/worker.py": WORKER.format(args="1, is_profiling=True")}
    plugin = "from host.runner import Runner\n\n\ndef init(self, cfg):\n    pass\n\n\nRunner.initialize = init\n"
    result = scan(old, old, plugin)
    expect(result, ["PP0110 error latent"])
    finding = only(result, "PP0110")
    assert finding.status.value == "latent" and finding.plugin.line == 8


def p(name: str, kind: ParamKind = ParamKind.POSITIONAL_OR_KEYWORD, default: str | None = None) -> Param:
    return Param(name, kind, default)


@pytest.mark.parametrize(("base", "repl", "narrower"), [
    ((p("a"),), (p("a"),), False),
    ((p("a"), p("b", default="1")), (p("a"),), True),
    ((p("a"),), (p("args", ParamKind.VAR_POSITIONAL), p("kw", ParamKind.VAR_KEYWORD)), False),
    ((p("a"), p("kw", ParamKind.VAR_KEYWORD)), (p("a"),), True),
    ((p("a", default="1"),), (p("a"),), True),  # the replacement requires what the base defaults
    ((p("a"),), (p("a"), p("b", default="2")), False),
    ((p("a"), p("b")), (p("b"), p("a")), True),  # reordered
])
def test_is_narrower(base, repl, narrower):
    assert is_narrower(base, repl) is narrower


def test_call_sites_inside_replaced_host_code_do_not_count():
    """The host's only caller is itself replaced by the plugin: that host code never runs."""
    from harness import expect, run_scan
    from pinport.checks.replaced_callers import ReplacedCallersCheck

    host = {"host/runner.py": "class Runner:\n    def propose(self, a):\n        return a\n\n"
                              "    def execute(self):\n        return self.propose(1)\n"}
    patching = "class ArcticPatch:\n    pass\n"
    plugin = {"plug/patching.py": patching,
              "plug/patch.py": "from plug.patching import ArcticPatch\nfrom host.runner import Runner\n\n"
                               "class RunnerPatch(ArcticPatch[Runner]):\n"
                               "    def propose(self, a, extra):\n        return a\n"}
    expect(run_scan(host, host, plugin, checks=(ReplacedCallersCheck(),)), ["PP0112 error latent"])
    plugin["plug/patch.py"] += "\n    def execute(self):\n        return self.propose(1, 2)\n"
    expect(run_scan(host, host, plugin, checks=(ReplacedCallersCheck(),)), ["no PP0112"])


@pytest.mark.parametrize(("count", "more"), [(10, None), (12, "... and 2 more call sites"),
                                             (21, "... and 11 more call sites")])
def test_call_sites_beyond_ten_are_counted_not_listed(count, more):
    calls = "".join(f"\n\ndef run_{i}():\n    graph_capture(1, {2 + i % 2})\n" for i in range(count))
    new = {"host/state.py": STATE_NEW, "host/runner.py": "from host.state import graph_capture\n" + calls}
    result = scan({"host/state.py": STATE_OLD}, new, MODULE_PATCH)
    expect(result, ["PP0111 error drift"])
    finding = only(result, "PP0111")
    assert finding.args["count"] == count and finding.args["given"] == 2 and finding.args["accepted"] == 1
    sites = [d for d in finding.details if d.startswith("host/runner.py:")]
    assert len(sites) == 10 and (finding.details[10] if more else None) in (more, None)
    assert (more in finding.details) if more else not any(d.startswith("...") for d in finding.details)


_MODEL_CALLER = "from host.state import graph_capture\n\n\ndef run():\n    graph_capture(1, graph_capture_context=2)\n"
_SINK = ("from host.state import graph_capture\n\n\nclass SinkLayer:\n    def forward(self):\n"
         "        graph_capture(1, graph_capture_context=2)\n")


@pytest.mark.parametrize(("files", "expected", "reason"), [
    # severity follows the evidence: only model-specific host code calls it so -> warning, with the reason
    ({"host/models/pangu.py": _MODEL_CALLER}, ["PP0110 warning drift"], "warning: only host code for some models"),
    # ... or a method of a class only one model builds
    ({"host/layers/sink.py": _SINK, "host/models/pangu.py": "from host.layers.sink import SinkLayer\n\n\n"
                                                            "def build():\n    return SinkLayer()\n"},
     ["PP0110 warning drift"], "warning: only host code for some models"),
    # twin: the main path calls it -> error, naming the line that decides
    ({"host/runner.py": _MODEL_CALLER}, ["PP0110 error drift"], "error: raises on the main path, host/runner.py:5"),
])
def test_severity_follows_where_the_host_calls_it(files, expected, reason):
    old = {"host/state.py": STATE_OLD}
    new = {"host/state.py": STATE_NEW, **files}
    result = run_scan(old, new, {**PATCHING, PATCH: MODULE_PATCH}, checks=(ReplacedCallersCheck(),),
                      optional_paths=("host.models",))
    expect(result, expected)
    assert any(d.startswith(reason) for d in only(result, "PP0110").details)


def test_a_patch_of_a_value_before_the_function_does_not_end_the_walk():
    """`LIMIT = 4` patches a value (no function to call): skipped, and the replaced function after it still judged."""
    plugin = MODULE_PATCH.replace("    def graph_capture(device):\n", "    LIMIT = 4\n\n    def graph_capture(device):\n")
    runner = "from host.state import graph_capture\n\n\ndef run():\n    graph_capture(1, 2)\n"
    result = scan({"host/state.py": STATE_OLD}, {"host/state.py": STATE_NEW, "host/runner.py": runner}, plugin)
    expect(result, ["PP0111 error drift StatePatch.graph_capture:8"], at=True)
