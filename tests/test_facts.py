"""ScanFacts: the shared facts several checks read, asserted through the findings they decide."""

import pytest

from harness import expect, only, outcomes, run_scan
from pinport.checks.instance_attributes import AttributesCheck
from pinport.checks.mirrors import MirrorsCheck
from pinport.checks.undefined import UndefinedCheck

PATCHING = {"plug/patching.py": "class ArcticPatch:\n    pass\n"}
ENGINE = """\
class Engine:
    def __init__(self, config):
        self.config = config
        self.scale = config.scale

    def step(self, batch):
        kind = self.__class__.__name__
        outputs = []
        for item in batch:
            outputs.append((kind, item * self.scale))
        return outputs
"""
MIRROR = """\
from plug.patching import ArcticPatch
from host.engine import Engine


class EnginePatch(ArcticPatch[Engine]):
    def step(self, batch):
        kind = self.__class__.__name__
        outputs = []
        for item in batch:
            outputs.append((kind, item * self.scale))
        return outputs
"""


def test_a_dunder_read_before_the_vanished_member_does_not_hide_it():
    """`self.__class__` sorts before `self.scale`: skipping it must not end the walk over the reads."""
    new = ENGINE.replace("        self.scale = config.scale\n", "")
    result = run_scan({"host/engine.py": ENGINE}, {"host/engine.py": new}, {"plug/patch.py": MIRROR, **PATCHING},
                      checks=(MirrorsCheck(),))
    expect(result, ["PP1202 error drift"])
    finding = only(result, "PP1202")
    assert (finding.args["name"], finding.plugin.line, finding.plugin.column) == ("scale", 10, 0)
    assert (finding.old.path, finding.old.line) == ("host/engine.py", 4) and finding.new is None


HIERARCHY = """\
class Base:
    def __init__(self):
        self.ready = True


class Sub(Base):
    def step(self):
        return 1
"""
GONE = "class Gone:\n    def __init__(self):\n        self.x = 0\n"
PROVIDING = """\
from plug.patching import ArcticPatch
from host.engine import Base, Sub


class BasePatch(ArcticPatch[Base]):
    def __init__(self):
        self.cache = {}


class SubPatch(ArcticPatch[Sub]):
    def step(self):
        return self.cache
"""
VANISHED_TARGET = """\
from plug.patching import ArcticPatch
from host.gone import Gone


class GonePatch(ArcticPatch[Gone]):
    def __init__(self):
        self.extra = 1
"""


def test_a_member_the_plugin_adds_to_a_base_class_is_provided_to_its_subclasses():
    """`self.cache`, set by the plugin's patch of Base.__init__, is read by its patch of Sub.step: no class
    defines it, yet it is no undefined member (and a patch of a class NEW dropped does not stop the lookup)."""
    old = {"host/engine.py": HIERARCHY, "host/gone.py": GONE}
    new = {"host/engine.py": HIERARCHY, "host/gone.py": "X = 1\n"}
    plugin = {"plug/patch.py": PROVIDING, "plug/gone_patch.py": VANISHED_TARGET, **PATCHING}
    result = run_scan(old, new, plugin, checks=(AttributesCheck(), UndefinedCheck()))
    expect(result, ["no PP0051", "no PP0901"])
    bare = {"plug/patch.py": PROVIDING.replace("        self.cache = {}\n", "        self.other = {}\n"), **PATCHING}
    result = run_scan(old, new, bare, checks=(AttributesCheck(), UndefinedCheck()))
    expect(result, ["PP0051 error latent"])
    assert only(result, "PP0051").args["name"] == "cache"


def _mirror_scan(new_engine: str, mirror: str = MIRROR):
    return run_scan({"host/engine.py": ENGINE}, {"host/engine.py": new_engine}, {"plug/patch.py": mirror, **PATCHING},
                    checks=(MirrorsCheck(),))


def test_a_vanished_members_rename_comes_from_news_body_before_the_class():
    """NEW's `step` now reads `self.scale_factor`; the class also gained `scales`, a closer name: the body wins."""
    new = ENGINE.replace("        self.scale = config.scale\n",
                         "        self.scale_factor = config.scale\n        self.scales = []\n") \
        .replace("item * self.scale", "item * self.scale_factor")
    result = _mirror_scan(new)
    expect(result, ["PP1201 warning drift", "PP1202 error drift"])
    finding = only(result, "PP1202")
    assert (finding.args["name"], finding.plugin.line) == ("scale", 10)
    assert finding.suggestion == "use `self.scale_factor` as upstream now does"


def test_a_member_neither_version_defines_is_no_vanished_member():
    result = _mirror_scan(ENGINE, MIRROR.replace("item * self.scale", "item * self.scale * self.bias"))
    expect(result, ["no PP1202"])


def test_a_mirror_whose_class_new_dropped_reports_no_vanished_member():
    result = _mirror_scan("class Other:\n    pass\n")
    expect(result, ["no PP1202"])


def test_a_stored_fact_is_built_once_across_runs_under_its_trees_contents_and_settings(tmp_path):
    """`ScanFacts.stored` keeps a fact of the plugin's and host trees' contents in the index cache:
    the next scan of the same trees and settings reads it back instead of building it; other
    settings, another host tree or no cache mean another key (or none); a damaged row is rebuilt."""
    from dataclasses import replace

    from harness import HOST, PLUGIN, SYNTHETIC, inline_tree
    from pinport.config import Settings
    from pinport.model.index import IndexCache
    from pinport.plugin.forks import CopiedLine
    from pinport.scan import load_models

    settings = Settings(host=HOST, plugin_package=PLUGIN, pin_sources=(), **SYNTHETIC)
    old = inline_tree(tmp_path / "old", HOST, "host 1.0", {"host/engine.py": "X = 1\n"})
    new = inline_tree(tmp_path / "new", HOST, "host 2.0", {"host/engine.py": "X = 2\n"})
    plugin = inline_tree(tmp_path / "plugin", PLUGIN, "plugin", {"plug/mod.py": "import host.engine\n"})
    cache = IndexCache(tmp_path / "index.sqlite")
    line = CopiedLine("plug.mod", "plug/mod.py", 1, "<module>", "a", "host.engine", "host/engine.py", 1, "b",
                      "host/engine.py", 1, "c", 0.75)
    built: list[int] = []

    def build():
        built.append(1)
        return [line]

    def facts(config=settings, cached=cache):
        models = load_models(plugin, old, new, config, cache=cached)
        models.index_cache = cached
        return models.facts(config)

    first = facts()
    assert first.stored("test-fact", list[CopiedLine], build, first.old, first.new) == [line] and built == [1]
    again = facts()
    assert again.stored("test-fact", list[CopiedLine], build, again.old, again.new) == [line] and built == [1]
    key = again.stored_key("test-fact", again.old, again.new)
    assert key and key != again.stored_key("test-fact", again.new, again.new)
    assert key != facts(replace(settings, mirror_threshold=0.9)).stored_key("test-fact", again.old, again.new)
    assert facts(cached=None).stored_key("test-fact", again.old) == ""
    cache.put_many([(key, b'[["only", "two"]]')])
    assert facts().stored("test-fact", list[CopiedLine], build, again.old, again.new) == [line] and built == [1, 1]


@pytest.mark.parametrize(("caller", "reached"), [("r.step(1, b=2)", True), ("r.step(1)", False)])
def test_an_overrides_reach_is_judged_once_across_runs(tmp_path, monkeypatch, caller, reached):
    """Whether host code can call an override in a way it rejects (`ScanFacts.override_reached`) is
    kept in the index cache: a second scan of the same trees reads the verdict instead of walking
    the host again; without a cache it is judged on every scan."""
    import pinport.facts as facts_mod
    from harness import HOST, PLUGIN, SYNTHETIC, inline_tree
    from pinport.config import Settings
    from pinport.model.index import IndexCache
    from pinport.scan import load_models

    settings = Settings(host=HOST, plugin_package=PLUGIN, pin_sources=(), **SYNTHETIC)
    old = inline_tree(tmp_path / "old", HOST, "host 1.0", {"host/runner.py": "class Runner:\n    def step(self, a):\n        pass\n"})
    new = inline_tree(tmp_path / "new", HOST, "host 2.0", {"host/runner.py": (
        "class Runner:\n    def step(self, a, b=None):\n        pass\n\n\ndef drive(r: Runner):\n    " + caller + "\n")})
    plugin = inline_tree(tmp_path / "plugin", PLUGIN, "plugin", {
        "plug/mod.py": "from host.runner import Runner\n\n\nclass Mine(Runner):\n    def step(self, a):\n        pass\n"})
    cache = IndexCache(tmp_path / "index.sqlite")
    judged: list[bool] = []
    real = facts_mod.override_reached
    monkeypatch.setattr(facts_mod, "override_reached", lambda *a, **k: judged.append(verdict := real(*a, **k)) or verdict)

    def verdict(cached):
        models = load_models(plugin, old, new, settings, cache=cached)
        models.index_cache = cached
        facts = models.facts(settings)
        patch = next(p for p in facts.plugin.surface.patches if p.name == "step")
        return facts.override_reached(facts.new, patch)

    assert verdict(cache) is reached and judged == [reached]
    assert verdict(cache) is reached and judged == [reached]  # read back, not judged again
    assert verdict(None) is reached and judged == [reached, reached]


def _cached_scans(tmp_path, old_files, new_files, plugin_files, check, **config):
    """scan(cache) -> the check's findings over these trees, with `cache` (an IndexCache or None) as
    the index cache: the same trees each time, so a second scan with the cache is a warm one."""
    from harness import HOST, PLUGIN, SYNTHETIC, inline_tree
    from pinport.config import Settings
    from pinport.scan import load_models, scan_models

    settings = Settings(host=HOST, plugin_package=PLUGIN, pin_sources=(), **SYNTHETIC, **config)
    old = inline_tree(tmp_path / "old", HOST, "host 1.0", old_files)
    new = inline_tree(tmp_path / "new", HOST, "host 2.0", new_files)
    plugin = inline_tree(tmp_path / "plugin", PLUGIN, "plugin", plugin_files)

    def scan(cached):
        models = load_models(plugin, old, new, settings, cache=cached)
        models.index_cache = cached
        return scan_models(models, settings, extra_checks=(check,), strict=True)
    return scan


def test_the_unused_classes_of_forks_are_found_once_across_runs(tmp_path, monkeypatch):
    """Which classes of forked files nothing in the plugin hands on (`ScanFacts.unused_fork_classes`)
    is kept in the index cache: a second scan of the same trees reads it instead of walking every
    plugin module again, and reports the same; without a cache it is found on every scan."""
    import pinport.facts as facts_mod
    from pinport.checks.override_signature import SignaturesCheck
    from pinport.model.index import IndexCache

    base = "class BackendBase:\n    def shape(self, n):\n        return (n,)\n"
    forked = ("from host.base import BackendBase\n\n\nclass Backend(BackendBase):\n    def shape(self, n):\n"
              "        return (2, n)\n\n\nclass Impl:\n    def forward(self, x):\n        return x\n")
    new_base = base.replace("(self, n)", "(self, n, spec=None)") + \
        "\n\ndef shape_of(b: BackendBase):\n    return b.shape(1, spec=2)\n"
    scan = _cached_scans(tmp_path, {"host/base.py": base, "host/flash.py": forked},
                         {"host/base.py": new_base, "host/flash.py": forked},
                         {"plug/flash_fork.py": forked, "plug/attention.py": "from plug.flash_fork import Impl\n\nIMPLS = [Impl]\n"},
                         SignaturesCheck(), forks=(("plug/flash_fork.py", "host/flash.py"),))
    walked: list[frozenset] = []
    real = facts_mod.unreached_classes
    monkeypatch.setattr(facts_mod, "unreached_classes", lambda *a: walked.append(found := real(*a)) or found)
    cache = IndexCache(tmp_path / "index.sqlite")
    first = outcomes(scan(cache), at=True)
    assert first == ["PP0204 info latent Backend:4"] and walked == [{("plug.flash_fork", "Backend")}]
    assert outcomes(scan(cache), at=True) == first and len(walked) == 1  # read back, not walked again
    assert outcomes(scan(None), at=True) == first and len(walked) == 2


def test_the_host_calls_confirming_an_override_are_found_once_across_runs(tmp_path, monkeypatch):
    """The host call sites reaching a plugin class through a host attribute the plugin sets
    (`ScanFacts.confirmed_by`) are kept in the index cache: a second scan of the same trees reads
    them instead of parsing the host modules calling the method, and confirms the same error."""
    from pinport.checks.override_signature import SignaturesCheck
    from pinport.facts import ScanFacts
    from pinport.model.index import IndexCache

    host = {"host/proposer.py": "class Proposer:\n    def propose(self, tokens, step=0):\n        return tokens\n",
            "host/runner.py": "from host.proposer import Proposer\n\n\nclass Runner:\n    def __init__(self):\n"
                              "        self.drafter = Proposer()\n\n    def execute(self, tokens):\n"
                              "        return self.drafter.propose(tokens, step=1)\n"}
    plugin = {"plug/proposer.py": "from host.proposer import Proposer\n\n\nclass MyProposer(Proposer):\n"
                                  "    def propose(self, tokens):\n        return tokens\n",
              "plug/runner.py": "from host.runner import Runner\nfrom plug.proposer import MyProposer\n\n\n"
                                "class MyRunner(Runner):\n    def __init__(self):\n        super().__init__()\n"
                                "        self.drafter = MyProposer()\n"}
    scan = _cached_scans(tmp_path, host, host, plugin, SignaturesCheck())
    searched: list[int] = []
    real = ScanFacts.confirming_sites
    monkeypatch.setattr(ScanFacts, "confirming_sites", lambda self, *a: searched.append(1) or real(self, *a))
    cache = IndexCache(tmp_path / "index.sqlite")

    def confirmed(cached) -> list[str]:
        (finding,) = scan(cached).findings
        assert (finding.code, finding.level.value, finding.plugin.line) == ("PP0101", "error", 5)
        return [d for d in finding.details if d.startswith("confirmed by")]
    expected = ["confirmed by host/runner.py:9, which calls it through `self.drafter`, set to the plugin's class"]
    assert confirmed(cache) == expected and searched
    runs = len(searched)
    assert confirmed(cache) == expected and len(searched) == runs  # read back, not searched again
    assert confirmed(None) == expected and len(searched) > runs  # no cache: searched on every scan
