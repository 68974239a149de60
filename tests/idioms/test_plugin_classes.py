"""Idioms of plugins built from their own classes around the host's (vllm-omni's schedulers, serving
classes and caches): a mixin whose `self` is a plugin subclass that also derives from a host class,
attributes set by targets only a parser sees (a multi-line annotated assignment, a parenthesised
tuple), and a call on a host-typed object that a plugin subclass of that host class takes. Each with
its negative twin; whole findings asserted (code, severity, status, plugin, OLD and NEW)."""

from __future__ import annotations

import pytest

from harness import expect, run_scan
from pinport.checks.call_binding import CallsCheck
from pinport.checks.undefined import UndefinedCheck

# -- a mixin used before a host class ----------------------------------------------------------------

SCHEDULER = "class Scheduler:\n    def __init__(self):\n        self.skipped_waiting = []\n"
MIXIN = """
from host.sched import Scheduler


class Mixin:
    def drain(self):
        return self.skipped_waiting


class Mine(Mixin, {base}):
    pass
"""


@pytest.mark.parametrize(("base", "expected"), [
    ("Scheduler", ["no PP0051"]),  # `self` in Mixin.drain is a Mine, a host Scheduler
    # negative twin: the plugin subclass derives from no host class that sets the member
    ("object", ["PP0051 error latent"]),
])
def test_a_mixin_sees_the_host_class_its_subclasses_derive_from(base, expected):
    host = {"host/sched.py": SCHEDULER}
    result = run_scan(host, host, {"plug/sched.py": MIXIN.format(base=base)}, checks=(UndefinedCheck(),))
    expect(result, expected)
    if expected[0].startswith("PP0051"):
        (finding,) = result.findings
        assert (finding.plugin.path, finding.plugin.line, finding.plugin.unit, finding.args["name"], finding.old,
                finding.new) == ("plug/sched.py", 6, "Mixin.drain", "skipped_waiting", None, None)


# -- attributes set by targets a line-based reading misses --------------------------------------------

CACHE = """
def resolve(cfg):
    return cfg, 1, 2


class Cache:
    def __init__(self, cfg):
{assign}

    def get(self, key):
        return self.{read}.get(key)
"""


@pytest.mark.parametrize(("assign", "read", "expected"), [
    ("        self._sessions: dict[\n            str,\n            int,\n        ] = {}", "_sessions", ["no PP0051"]),
    ("        (\n            self._len,\n            self._chunks,\n            self._sessions,\n        ) = resolve(cfg)",
     "_sessions", ["no PP0051"]),
    # negative twin: the read names a member no target sets
    ("        self._sessions: dict[\n            str,\n            int,\n        ] = {}", "_session", ["PP0051 error latent"]),
])
def test_members_set_by_multi_line_targets_are_defined(assign, read, expected):
    plugin = {"plug/cache.py": CACHE.format(assign=assign, read=read)}
    result = run_scan({"host/x.py": ""}, {"host/x.py": ""}, plugin, checks=(UndefinedCheck(),))
    expect(result, expected)
    if expected[0].startswith("PP0051"):
        (finding,) = result.findings
        assert (finding.plugin.path, finding.plugin.unit, finding.args["name"], finding.old, finding.new) == (
            "plug/cache.py", "Cache.get", "_session", None, None)


# -- a call on a host-typed object that a plugin subclass of the host class takes --------------------

CLIENT = """
class EngineClient:
    def generate(self, prompt, sampling_params, request_id):
        pass


class Serving:
    def __init__(self, engine_client: EngineClient):
        self.engine_client = engine_client
"""
SERVING = """
from host.engine import EngineClient, Serving


class OmniClient(EngineClient):
    def generate(self, prompt, sampling_params=None, request_id=None, {extra}):
        pass


class OmniServing(Serving):
    def create(self, prompt):
        return self.engine_client.generate(prompt=prompt, request_id="r", sampling_params_list=[])


def serve():
    return OmniServing({client})
"""


@pytest.mark.parametrize(("extra", "client", "expected"), [
    ("sampling_params_list=None", "OmniClient()", ["PP0301 warning latent"]),
    # negative twins: the plugin's override does not take the call either, or the plugin never builds
    # its subclass (the host's own client is all there is)
    ("output_modalities=None", "OmniClient()", ["PP0301 error latent"]),
    ("sampling_params_list=None", "EngineClient()", ["PP0301 error latent"]),
])
def test_a_call_a_plugin_subclass_of_the_receivers_class_takes_is_a_warning(extra, client, expected):
    host = {"host/engine.py": CLIENT}
    result = run_scan(host, host, {"plug/serving.py": SERVING.format(extra=extra, client=client)},
                      checks=(CallsCheck(),))
    expect(result, expected)
    warned = expected[0].split()[1] == "warning"
    for finding in result.findings:
        assert (finding.plugin.path, finding.plugin.line, finding.plugin.unit, finding.subject, finding.old.path,
                finding.old.line, finding.new.path, finding.new.line) == (
            "plug/serving.py", 11, "OmniServing.create", "host.engine.EngineClient.generate", "host/engine.py", 2,
            "host/engine.py", 2)
        assert finding.args["name"] == "sampling_params"
        assert any("OmniClient.generate" in d for d in finding.details) == warned
