"""ScanFacts: the shared facts several checks read, asserted through the findings they decide."""

import pytest

from harness import expect, only, run_scan
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
