"""ScanFacts: the shared facts several checks read, asserted through the findings they decide."""

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
