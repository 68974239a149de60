"""Idioms of plugin runners that hold objects of their own where the host expects its types (vllm-ascend's
model runners and samplers): a branch the enclosing test rules out, a duck-typed plugin object handed to
a host constructor that stores it, and a method replaced on an instance by a plugin helper handed the
object. Each with its negative twin; whole findings asserted (code, severity, status, plugin, OLD and NEW)."""

from __future__ import annotations

import pytest

from harness import expect, run_scan
from pinport.checks.call_binding import CallsCheck
from pinport.checks.undefined import UndefinedCheck

# -- a branch the enclosing test decides --------------------------------------------------------------

RUNNER = """
class Runner:
    def __init__(self):
        self.use_async = True
        self.uses_mrope = False
        self.mrope_positions = None
"""
DECIDED = """
from host.runner import Runner


class Mine(Runner):
    def prepare(self):
        if {test}:
{body}
        return 0
"""


@pytest.mark.parametrize(("test", "body", "expected"), [
    # `self.uses_mrope` is true inside: the else of the conditional expression never runs
    ("self.use_async and self.uses_mrope", "            return self.mrope_positions if self.uses_mrope "
     "else self.xdrope_positions", ["no PP0051"]),
    ("self.uses_mrope", "            if not self.uses_mrope:\n                return self.xdrope_positions",
     ["no PP0051"]),
    ("not self.uses_mrope", "            return self.mrope_positions\n        elif self.uses_mrope:\n"
     "            return 1\n        else:\n            return self.xdrope_positions", ["no PP0051"]),
    # negative twins: `or` decides nothing, the branch reassigns the test, a nested def runs later
    ("self.use_async or self.uses_mrope", "            return self.mrope_positions if self.uses_mrope "
     "else self.xdrope_positions", ["PP0051 error latent"]),
    ("self.uses_mrope", "            self.uses_mrope = self.use_async\n            return self.mrope_positions "
     "if self.uses_mrope else self.xdrope_positions", ["PP0051 error latent"]),
    ("self.uses_mrope", "            def later():\n                return 0 if self.uses_mrope else "
     "self.xdrope_positions\n            return later", ["PP0051 error latent"]),
])
def test_a_branch_the_enclosing_test_rules_out_reads_nothing(test, body, expected):
    host = {"host/runner.py": RUNNER}
    result = run_scan(host, host, {"plug/runner.py": DECIDED.format(test=test, body=body)},
                      checks=(UndefinedCheck(),))
    expect(result, expected)
    if expected[0].startswith("PP0051"):
        (finding,) = result.findings
        line = next(i for i, text in enumerate(DECIDED.format(test=test, body=body).lstrip("\n").splitlines(), 1)
                    if "xdrope" in text)
        assert (finding.plugin.path, finding.plugin.line, finding.subject, finding.args["name"],
                finding.old, finding.new) == ("plug/runner.py", line, "host.runner.Runner.xdrope_positions",
                                              "xdrope_positions", None, None)


# -- a method replaced on the instance a plugin class holds -------------------------------------------

HANDLER = """
class Handler:
    def broadcast(self, tokens, batch):
        pass


class HostRunner:
    def __init__(self):
        self.handler = Handler()
"""
INSTALL = """
def install(handler, steps):
    def broadcast(tokens=None, batch=None):
        return steps

    handler.{method} = broadcast
"""
HOLDER = """
from host.runner import HostRunner


class Mine(HostRunner):
    def load(self):
        from plug.install import install
        install({handed}, 2)

    def step(self):
        self.handler.broadcast()
"""
DIRECT = """
from host.runner import HostRunner


def _broadcast(tokens=None):
    return tokens


class Mine(HostRunner):
    def load(self):
        self.handler.broadcast = {value}

    def step(self):
        self.handler.broadcast()
"""


@pytest.mark.parametrize(("plugin", "expected"), [
    # the helper handed `self.handler` installs a closure with both parameters defaulted
    ({"plug/install.py": INSTALL.format(method="broadcast"), "plug/runner.py": HOLDER.format(handed="self.handler")},
     ["no PP0301"]),
    ({"plug/runner.py": DIRECT.format(value="_broadcast")}, ["no PP0301"]),
    ({"plug/runner.py": DIRECT.format(value="lambda tokens=None, batch=None: tokens")}, ["no PP0301"]),
    # negative twins: the helper installs another method, is handed another object, or the installed
    # function does not take the call either
    ({"plug/install.py": INSTALL.format(method="receive"), "plug/runner.py": HOLDER.format(handed="self.handler")},
     ["PP0301 error latent"]),
    ({"plug/install.py": INSTALL.format(method="broadcast"), "plug/runner.py": HOLDER.format(handed="self.other")},
     ["PP0301 error latent"]),
    ({"plug/runner.py": DIRECT.format(value="lambda tokens: tokens")}, ["PP0301 error latent"]),
])
def test_a_method_installed_on_a_held_object_takes_the_call(plugin, expected):
    host = {"host/runner.py": HANDLER}
    result = run_scan(host, host, plugin, checks=(CallsCheck(),))
    expect(result, expected)
    if expected[0].startswith("PP0301"):
        (finding,) = result.findings  # the first parameter the call leaves out
        assert (finding.plugin.path, finding.plugin.unit, finding.args["name"], finding.subject, finding.old.path,
                finding.old.line, finding.new.path, finding.new.line) == (
            "plug/runner.py", "Mine.step", "tokens", "host.runner.Handler.broadcast", "host/runner.py", 2,
            "host/runner.py", 2)


# -- a plugin object handed to the host constructor that stores it ------------------------------------

SAMPLERS = """
class Sampler:
    def apply(self, logits, idx, idx_np, pos):
        return logits


class Rejection:
    def __init__(self, sampler: Sampler, cfg):
        self.sampler = sampler
        self.cfg = cfg
"""
HANDS_OVER = """
from host.sample import Rejection, Sampler


class DuckSampler:
    def apply(self, logits, idx, idx_np):
        return logits


class SubSampler(Sampler):
    {sub_body}


class Mine(Rejection):
    def __init__(self, sampler, cfg):
        super().__init__(sampler, cfg)

    def __call__(self, logits):
        return self.sampler.apply(logits, 1, 2)


def build(cfg):
{build}
"""


@pytest.mark.parametrize(("build", "sub_body", "expected"), [
    # every construction hands over a duck-typed plugin sampler, or a plugin subclass overriding `apply`
    ("    base = DuckSampler()\n    return Mine(base, cfg)", "pass", ["no PP0301"]),
    ("    return Mine(sampler=DuckSampler(), cfg=cfg)", "pass", ["no PP0301"]),
    ("    return Mine(SubSampler(), cfg)", "def apply(self, logits, idx, idx_np):\n        return logits",
     ["no PP0301"]),
    # negative twins: a host sampler handed over, a plugin subclass that inherits the host's `apply`,
    # one site of two passing something unknown, no construction in the plugin at all
    ("    return Mine(Sampler(), cfg)", "pass", ["PP0301 error latent"]),
    ("    return Mine(SubSampler(), cfg)", "pass", ["PP0301 error latent"]),
    ("    Mine(DuckSampler(), cfg)\n    return Mine(cfg.sampler, cfg)", "pass", ["PP0301 error latent"]),
    ("    return cfg", "pass", ["PP0301 error latent"]),
])
def test_a_plugin_object_handed_to_the_host_constructor_is_what_the_attribute_holds(build, sub_body, expected):
    host = {"host/sample.py": SAMPLERS}
    result = run_scan(host, host, {"plug/sample.py": HANDS_OVER.format(build=build, sub_body=sub_body)},
                      checks=(CallsCheck(),))
    expect(result, expected)
    if expected[0].startswith("PP0301"):
        (finding,) = result.findings
        assert (finding.plugin.path, finding.plugin.unit, finding.args["name"], finding.subject, finding.old.path,
                finding.old.line, finding.new.path, finding.new.line) == (
            "plug/sample.py", "Mine.__call__", "pos", "host.sample.Sampler.apply", "host/sample.py", 2,
            "host/sample.py", 2)
