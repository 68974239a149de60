"""Plugin-load timing (#11): a patched class built before, or by, the host's plugin loading."""

import pytest

from harness import expect, only, run_scan
from pinport.checks.load_timing import LoadTimingCheck

PATCHING = {"plug/patching.py": "class ArcticPatch:\n    pass\n"}
LOADER = {"host/plugins.py": "def load_general_plugins():\n    pass\n"}
LOADERS = ("load_general_plugins",)  # the synthetic host's plugin loader (the plugin-loaders setting)
ARGS = """from dataclasses import dataclass


@dataclass
class Args:
    model: str = ""

    def __post_init__(self):
        from host.plugins import load_general_plugins

        load_general_plugins()


@dataclass
class AsyncArgs(Args):
    log: bool = False
"""
ENTRY = "from host.args import Args\n\n\ndef start():\n    return Args(model='m')\n"


def patch(target: str, member: str, module: str = "host.args") -> str:
    return (f"from plug.patching import ArcticPatch\nfrom {module} import {target}\n\n\n"
            f"class {target}Patch(ArcticPatch[{target}]):\n    def {member}(self, *args, **kwargs):\n        pass\n")


def scan(host: dict[str, str], plugin: str, check: LoadTimingCheck | None = None):
    files = {**LOADER, **host}
    return run_scan(files, files, {**PATCHING, "plug/patch.py": plugin}, checks=(check or LoadTimingCheck(LOADERS),))


@pytest.mark.parametrize(("target", "member", "expected"), [
    # 11: the first `EngineArgs(...)` loads the plugins from its own __post_init__
    ("Args", "__post_init__", ["PP1102 warning latent"]),
    ("Args", "__new__", ["PP1102 warning latent"]),
    # methods are looked up at call time: a patched ordinary method is seen by that instance
    ("Args", "create_config", ["no PP1102"]),
    # a subclass whose construction runs the loading __post_init__ it inherits
    ("AsyncArgs", "__post_init__", ["PP1102 warning latent"]),
])
def test_construction_that_loads_the_plugins(target, member, expected):
    expect(scan({"host/args.py": ARGS, "host/entry.py": ENTRY}, patch(target, member)), expected)


def test_construction_loads_evidence():
    result = scan({"host/args.py": ARGS, "host/entry.py": ENTRY}, patch("Args", "__post_init__"))
    expect(result, ["PP1102 warning latent"])
    finding = only(result, "PP1102")
    assert finding.subject == "host.args.Args" and finding.level.value == "warning"
    # placed on the patched construction member, where the fix goes (not on the patch class)
    assert (finding.plugin.path, finding.plugin.line, finding.plugin.unit) == (
        "plug/patch.py", 6, "ArgsPatch.__post_init__")
    assert (finding.new.path, finding.new.line) == ("host/args.py", 11)
    assert finding.details[0].startswith("host/args.py:11 (Args.__post_init__)")
    assert any(d.startswith("built at host/entry.py:5 (start)") for d in finding.details)
    assert finding.status.value == "latent"  # the same on both versions


def test_a_class_with_its_own_post_init_does_not_inherit_the_load():
    own = ARGS.replace("    log: bool = False\n", "    log: bool = False\n\n    def __post_init__(self):\n"
                                                      "        pass\n")
    expect(scan({"host/args.py": own}, patch("AsyncArgs", "__post_init__")), ["no PP1102"])


CORE = """from host.config import Config
from host.plugins import load_general_plugins


def start():
    {first}
    {second}
"""
CONFIG = "class Config:\n    def __init__(self):\n        pass\n\n    def describe(self):\n        pass\n"


@pytest.mark.parametrize(("first", "second", "member", "expected"), [
    # 11: built before the load in the function that loads
    ("cfg = Config()", "load_general_plugins()", "__init__", ["PP1101 warning latent"]),
    ("load_general_plugins()", "cfg = Config()", "__init__", ["no PP1101"]),
    ("cfg = Config()", "load_general_plugins()", "describe", ["no PP1101"]),
])
def test_built_before_the_load(first, second, member, expected):
    host = {"host/config.py": CONFIG, "host/core.py": CORE.format(first=first, second=second)}
    expect(scan(host, patch("Config", member, "host.config")), expected)


def test_built_before_evidence():
    host = {"host/config.py": CONFIG, "host/core.py": CORE.format(first="cfg = Config()",
                                                                  second="load_general_plugins()")}
    result = scan(host, patch("Config", "__init__", "host.config"))
    expect(result, ["PP1101 warning latent"])
    finding = only(result, "PP1101")
    assert (finding.args["built"], finding.args["loaded"]) == (6, 7)
    assert finding.details[0].startswith("host/core.py:6 (start)")
    assert finding.details[1].startswith("host/core.py:7 (start)")


def test_loader_names_are_settable():
    host = {"host/config.py": CONFIG, "host/core.py": "from host.config import Config\n\n\ndef start():\n"
                                                      "    cfg = Config()\n    boot_plugins()\n"}
    plugin = patch("Config", "__init__", "host.config")
    expect(scan(host, plugin), ["no PP1101"])
    expect(scan(host, plugin, LoadTimingCheck(loaders=("boot_plugins",))), ["PP1101 warning latent"])


BACKFILL = """

def _ensure_fields(args):
    for name, default in (("sp", 1), ("fp32", False)):
        if not hasattr(args, name):
            setattr(args, name, default)
"""


@pytest.mark.parametrize(("use", "expected"), [
    ("        _ensure_fields(self)\n", ["PP1102 info latent"]),  # the first use completes the early instance
    ("        self.sp = 2\n", ["PP1102 warning latent"]),  # twin: it only sets what it needs, no backfill
])
def test_plugin_that_backfills_on_first_use(use, expected):
    plugin = patch("Args", "__post_init__") + "\n    def create_config(self):\n" + use + BACKFILL
    result = scan({"host/args.py": ARGS, "host/entry.py": ENTRY}, plugin)
    expect(result, expected)
    finding = only(result, "PP1102")
    assert ("already backfills" in finding.suggestion) is (expected[0] == "PP1102 info latent")
