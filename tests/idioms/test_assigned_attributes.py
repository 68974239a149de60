"""Host call sites reaching a plugin class through a host attribute the plugin sets
(`self.drafter = PluginProposer(...)` in a subclass of the host runner): they confirm that an
ordinary subclass's override runs, so a call it cannot take is a certain TypeError."""

from __future__ import annotations

import pytest

from harness import expect, run_scan
from pinport.checks.override_signature import SignaturesCheck

HOST = {
    "host/proposer.py": "class Proposer:\n    def propose(self, tokens, step=0):\n        return tokens\n",
    "host/runner.py": "from host.proposer import Proposer\n\n\nclass Runner:\n    def __init__(self):\n"
                      "        self.drafter = Proposer()\n\n    def execute(self, tokens):\n"
                      "        return self.drafter.propose(tokens, step=1)\n",
}
PROPOSER = "from host.proposer import Proposer\n\n\nclass MyProposer(Proposer):\n    def propose(self, tokens):\n" \
           "        return tokens\n"


@pytest.mark.parametrize(("runner", "expected"), [
    # the plugin's runner puts its proposer where the host runner calls it: certain TypeError
    ("from host.runner import Runner\nfrom plug.proposer import MyProposer\n\n\nclass MyRunner(Runner):\n"
     "    def __init__(self):\n        super().__init__()\n        self.drafter = MyProposer()\n",
     ["PP0101 error latent"]),
    # negative twin: the plugin's runner replaces the host method that makes the call (vllm-rbln's
    # RBLNOptimumScheduler overrides Scheduler.schedule, which calls kv_cache_manager.allocate_slots):
    # only the plugin builds MyProposer and keeps it in MyRunner.drafter, so no host call reaches it
    ("from host.runner import Runner\nfrom plug.proposer import MyProposer\n\n\nclass MyRunner(Runner):\n"
     "    def __init__(self):\n        super().__init__()\n        self.drafter = MyProposer()\n\n"
     "    def execute(self, tokens):\n        return self.drafter.propose(tokens)\n",
     ["PP0101 info latent"]),
    # negative twin: the proposer is never put in reach of the host's call
    ("from host.runner import Runner\nfrom plug.proposer import MyProposer\n\n\nclass MyRunner(Runner):\n"
     "    def __init__(self):\n        super().__init__()\n        self.spare = MyProposer()\n",
     ["PP0101 warning latent"]),
])
def test_host_attribute_holding_a_plugin_class_confirms_the_call(runner, expected):
    plugin = {"plug/proposer.py": PROPOSER, "plug/runner.py": runner}
    result = run_scan(HOST, HOST, plugin, checks=(SignaturesCheck(),))
    expect(result, expected)
    (finding,) = result.findings
    assert (finding.plugin.path, finding.plugin.line, finding.args["param"]) == ("plug/proposer.py", 5, "step")
    if finding.level.value == "error":
        assert any("host/runner.py:9" in d and "self.drafter" in d for d in finding.details)


def test_only_calls_through_the_holding_attribute_confirm_however_the_call_is_wrapped():
    """The host runner calls `propose` on two attributes, one holding the plugin's proposer; the
    confirming call is written over two lines. Only that call confirms (the search for confirming
    calls reads just the lines naming the attribute, or whose receiver the text does not show)."""
    host = {**HOST, "host/runner.py": "from host.proposer import Proposer\n\n\nclass Runner:\n"
            "    def __init__(self):\n        self.drafter = Proposer()\n        self.spare = Proposer()\n\n"
            "    def execute(self, tokens):\n        self.spare.propose(tokens, step=2)\n"
            "        return (self.drafter\n                .propose(tokens, step=1))\n"}
    runner = ("from host.runner import Runner\nfrom plug.proposer import MyProposer\n\n\nclass MyRunner(Runner):\n"
              "    def __init__(self):\n        super().__init__()\n        self.drafter = MyProposer()\n")
    result = run_scan(host, host, {"plug/proposer.py": PROPOSER, "plug/runner.py": runner}, checks=(SignaturesCheck(),))
    expect(result, ["PP0101 error latent"])
    (finding,) = result.findings
    confirmed = [d for d in finding.details if d.startswith("confirmed by")]
    assert confirmed == ["confirmed by host/runner.py:11, which calls it through `self.drafter`, set to the "
                         "plugin's class"]
