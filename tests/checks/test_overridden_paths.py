"""Host call sites in host methods a plugin holder overrides without calling up: the host call never runs
with the plugin's component there, so a mismatch only they would trip is context (info), not a warning.
Each rule has a reachable case (the warning stays) and an unreachable twin (info)."""

from __future__ import annotations

import pytest

from harness import run_scan
from pinport.checks.override_signature import SignaturesCheck


def breaks(result, code: str) -> list[tuple]:
    """(level, status, plugin file, line, parameter, host file, line) of each finding of `code`."""
    return [(f.level.value, f.status.value, f.plugin.path, f.plugin.line, f.args["param"], f.new.path, f.new.line)
            for f in result.findings if f.code == code]


# The host runner's load_model hands its model to the drafter by keyword; the plugin's proposer names the
# parameter otherwise, and only the plugin's runner holds one.
HOLDER_HOST = {
    "host/proposer.py": "class Proposer:\n    def load_model(self, target_model):\n        return target_model\n",
    "host/runner.py": "from host.proposer import Proposer\n\n\nclass Runner:\n    def __init__(self):\n"
                      "        self.model = object()\n        self.drafter = Proposer()\n\n    def load_model(self):\n"
                      "        self.drafter.load_model(target_model=self.model)\n",
}
HOLDER_PLUGIN = {
    "plug/spec.py": "from host.proposer import Proposer\n\n\nclass MyProposer(Proposer):\n"
                    "    def load_model(self, model):\n        return model\n",
    "plug/runner.py": "from host.runner import Runner\n\nfrom plug.spec import MyProposer\n\n\nclass MyRunner(Runner):\n"
                      "    def __init__(self):\n        super().__init__()\n        self.drafter = MyProposer()\n\n"
                      "    def load_model(self):\n        {body}\n",
}


@pytest.mark.parametrize(("body", "level"), [
    # the holder's own load_model calls the drafter's method of the same name: no call up, the host's never runs
    ("self.drafter.load_model(self.model)", "info"),
    # calling up through super() or the base class: the host's keyword call runs on the plugin's drafter
    ("super().load_model()", "warning"),
    ("Runner.load_model(self)", "warning"),
])
def test_a_same_named_call_on_another_object_is_no_call_up(body, level):
    plugin = {**HOLDER_PLUGIN, "plug/runner.py": HOLDER_PLUGIN["plug/runner.py"].format(body=body)}
    result = run_scan(HOLDER_HOST, HOLDER_HOST, plugin, checks=(SignaturesCheck(),))
    assert breaks(result, "PP0101") == [(level, "latent", "plug/spec.py", 5, "target_model", "host/proposer.py", 2)]


@pytest.mark.parametrize(("dispatch", "level"), [
    # a member of that name dispatched by string with arguments the host's own proposer rejects: another
    # class's (the worker's `load_model()`), never the drafter's
    ('worker.collective_rpc("load_model")', "info"),
    # dispatched with what the host's proposer takes: it may be the drafter's, and the plugin's rejects it
    ('worker.collective_rpc("load_model", kwargs={"target_model": None})', "warning"),
])
def test_a_string_dispatch_the_hosts_member_rejects_names_another_member(dispatch, level):
    plugin = {**HOLDER_PLUGIN, "plug/runner.py": HOLDER_PLUGIN["plug/runner.py"].format(
        body="self.drafter.load_model(self.model)")}
    host = {**HOLDER_HOST, "host/executor.py": f"def reload(worker):\n    {dispatch}\n"}
    result = run_scan(host, host, plugin, checks=(SignaturesCheck(),))
    assert breaks(result, "PP0101") == [(level, "latent", "plug/spec.py", 5, "target_model", "host/proposer.py", 2)]


