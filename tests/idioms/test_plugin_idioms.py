"""Patching idioms of real vLLM plugins beyond ArcticInference: each with a positive and a negative twin.

(The README's patching-idioms table lists them, with the real release each was found in.)
"""

from __future__ import annotations

import pytest

from harness import expect, run_scan
from pinport.checks.call_binding import CallsCheck
from pinport.checks.undefined import UndefinedCheck

# -- CustomOp out-of-tree replacement: the host builds the plugin's class instead (vllm-rbln) --

CUSTOM_OP = """
class CustomOp:
    @classmethod
    def register_oot(cls, layer_cls=None, name=None):
        return layer_cls


class MethodBase:
    def apply(self, layer, x, topk_weights, topk_ids):
        raise NotImplementedError


class Unquantized(MethodBase, CustomOp):
    def apply(self, layer, x, topk_weights, topk_ids):
        return x


class Runner:
    @property
    def quant_method(self) -> MethodBase:
        return Unquantized()
"""

PLUGIN_METHOD = """
from host.ops import Unquantized


class MyUnquantized(Unquantized):
    def apply(self, layer, x, router_logits):
        return x
"""

PLUGIN_RUNNER = """
from host.ops import Runner


class MyRunner(Runner):
    def forward(self, x, logits):
        return self.quant_method.apply(layer=self, x=x, router_logits=logits)
"""


@pytest.mark.parametrize(("register", "expected"), [
    # installed through a plugin helper that calls Base.register_oot(cls), as vllm-rbln does
    ("from host.ops import Unquantized\nfrom plug.method import MyUnquantized\n\n\n"
     "def _register(base, cls):\n    base.register_oot(cls)\n\n\n"
     "def register():\n    _register(Unquantized, MyUnquantized)\n",
     ["PP0301 warning latent"]),
    # called directly
    ("from host.ops import Unquantized\nfrom plug.method import MyUnquantized\n\n\n"
     "def register():\n    Unquantized.register_oot(MyUnquantized)\n",
     ["PP0301 warning latent"]),
    # negative twin: the plugin class exists but is never installed; the host's class rejects the call
    ("def register():\n    pass\n",
     ["PP0301 error latent"]),
])
def test_register_oot_replacement_takes_the_call(register, expected):
    host = {"host/ops.py": CUSTOM_OP}
    result = run_scan(host, host, {"plug/method.py": PLUGIN_METHOD, "plug/runner.py": PLUGIN_RUNNER,
                                   "plug/boot.py": register}, checks=(CallsCheck(),))
    expect(result, expected)  # one call, three mismatched arguments: one finding listing them all
    assert sum(d.startswith("the same call also: PP030") for d in result.findings[0].details) == 2
    if "warning" in expected[0]:
        assert all("`MyUnquantized.apply`" in f.details[0] for f in result.findings)


def test_decorator_form_of_register_oot_is_discovered():
    from harness import load_inline_models
    plugin = {"plug/method.py": "from host.ops import Unquantized\n\n\n@Unquantized.register_oot\n"
                                "class Mine(Unquantized):\n    pass\n\n\n"
                                "@Unquantized.register_oot(name='Other')\nclass Named(Unquantized):\n    pass\n"}
    host = {"host/ops.py": CUSTOM_OP}
    with load_inline_models(host, host, plugin) as (models, _):
        found = [(r.host_class, r.plugin_class, r.site.line) for r in models.plugin.surface.replacements]
    assert found == [("host.ops.Unquantized", "Mine", 5), ("host.ops.Unquantized", "Named", 10)]


# -- a host attribute set by a multi-line annotated assignment (vllm-rbln on BlockHashToBlockMap) --

MAP_MULTILINE = """
class BlockMap:
    def __init__(self):
        self._cache: dict[
            int, list[int] | dict[int, int]
        ] = {}
"""
MAP_NO_CACHE = """
class BlockMap:
    def __init__(self):
        self._other: dict[
            int, int
        ] = {}
"""
USES_CACHE = "from host.pool import BlockMap\n\n\nclass Mine(BlockMap):\n    def get(self, k):\n        return self._cache.get(k)\n"


@pytest.mark.parametrize(("host", "expected"), [
    (MAP_MULTILINE, ["no PP0051"]),
    (MAP_NO_CACHE, ["PP0051 error latent"]),
])
def test_multiline_annotated_self_assignment_defines_the_attribute(host, expected):
    trees = {"host/pool.py": host}
    expect(run_scan(trees, trees, {"plug/m.py": USES_CACHE}, checks=(UndefinedCheck(),)), expected)


# -- version fallbacks the plugin already handles (vllm-spyre, vllm-beam-search-plugin) --

HOST_POOLER = {"host/pooler.py": "class Pooler:\n    pass\n"}


@pytest.mark.parametrize(("src", "expected"), [
    # the import in an `except ImportError:` handler only runs on the older host that has it; the probe it
    # falls back from is context (where both names are missing, the handler's import is what fails)
    ("try:\n    from host.pooler import NewPooler\nexcept ImportError:\n    from host.pooler import OldPooler\n",
     ["PP0601 info latent <module>:2", "PP0601 warning latent <module>:4"]),
    ("try:\n    from host.pooler import NewPooler\nexcept ImportError:\n    NewPooler = None\n",
     ["PP0601 warning latent <module>:2"]),  # a stand-in the code goes on to use: not a fallback
    # negative twin: an unguarded import of a name the host lacks is an error
    ("from host.pooler import OldPooler\n", ["PP0601 error latent <module>:1"]),
])
def test_except_import_error_handler_is_a_fallback(src, expected):
    from pinport.checks.imports import ImportsCheck
    result = run_scan(HOST_POOLER, HOST_POOLER, {"plug/m.py": src}, checks=(ImportsCheck(),))
    expect(result, expected, at=True)


ENVS = {"host/envs.py": "import os\n\nenvironment_variables = {\n"
                        "    'HOST_NEW_DIR': lambda: os.getenv('HOST_NEW_DIR'),\n}\n\n\n"
                        "def __getattr__(name):\n    return environment_variables[name]()\n"}
PROFILER = """
from importlib.util import find_spec

from host import envs


class Worker:
    def setup(self):
        if find_spec("host.profiler") is None:
            return self._legacy()
        if getattr(envs, "HOST_OLD_DIR", None) is not None:
            return self._legacy()
        return None

    def _legacy(self):
        return envs.HOST_OLD_DIR
"""


@pytest.mark.parametrize(("src", "expected"), [
    (PROFILER, ["PP0612 warning latent"]),  # only called where the plugin probes the host
    (PROFILER.replace("        return None\n", "        return self._legacy()\n"), ["PP0612 error latent"]),
])
def test_function_called_only_under_a_host_probe_is_guarded(src, expected):
    from pinport.checks.host_kinds import HostKindsCheck
    expect(run_scan(ENVS, ENVS, {"plug/worker.py": src}, checks=(HostKindsCheck(),)), expected)


SCHED_NEW = {"host/sched.py": "class Output:\n    def __init__(self, a):\n        self.a = a\n"}


@pytest.mark.parametrize(("files", "expected"), [
    # copies kept per host release, picked by version at run time: the 0.10 copy is not imported on 0.20
    ({"plug/vendored_v010.py": "from host.sched import Output\n\nOutput(a=1, b=2)\n",
      "plug/vendored_v020.py": "from host.sched import Output\n\nOutput(a=1)\n"}, ["PP0702 warning latent"]),
    # negative twin: the copy for the release being judged keeps its error
    ({"plug/vendored_v010.py": "from host.sched import Output\n\nOutput(a=1)\n",
      "plug/vendored_v020.py": "from host.sched import Output\n\nOutput(a=1, b=2)\n"}, ["PP0702 error latent"]),
    # a lone `_v2` suffix is no per-release copy
    ({"plug/client_v020.py": "from host.sched import Output\n\nOutput(a=1, b=2)\n"}, ["PP0702 error latent"]),
])
def test_per_release_copies_of_another_release_are_not_imported(files, expected, tmp_path):
    from dataclasses import replace

    from harness import inline_tree
    from pinport.config import Settings
    from pinport.scan import load_models, scan_models
    config = Settings(host="host", plugin_package="plug", pin_sources=())
    old = replace(inline_tree(tmp_path / "old", "host", "host 0.10.0", SCHED_NEW), version="0.10.0")
    new = replace(inline_tree(tmp_path / "new", "host", "host 0.20.0", SCHED_NEW), version="0.20.0")
    plugin = inline_tree(tmp_path / "plugin", "plug", "plugin", files)
    result = scan_models(load_models(plugin, old, new, config), config, extra_checks=(CallsCheck(),), strict=True)
    expect(result, expected)


# -- sys.modules stand-ins: the plugin installs its own module under a host name (vllm-rbln 0.12.0) --

LOADER = ("import importlib\nimport sys\n\n\ndef alias(name, module):\n    sys.modules.setdefault(name, module)\n"
          "    parent, _, attr = name.rpartition('.')\n    setattr(importlib.import_module(parent), attr, module)\n")
USES_STAND_IN = "from host.configs.extra import ExtraConfig\n"


@pytest.mark.parametrize(("installer", "expected"), [
    # through a helper in another plugin module, keyed by a module constant
    ("from plug import _config\nfrom plug.loader import alias\n\nNAME = 'host.configs.extra'\n\nalias(NAME, _config)\n",
     ["no PP0401"]),
    # directly
    ("import sys\n\nfrom plug import _config\n\nsys.modules['host.configs.extra'] = _config\n", ["no PP0401"]),
    # negative twin: nothing installs the module, so the import fails
    ("from plug import _config\n", ["PP0401 error latent"]),
])
def test_sys_modules_stand_in_makes_the_host_name_importable(installer, expected):
    from pinport.checks.imports import ImportsCheck
    host = {"host/configs/__init__.py": ""}
    plugin = {"plug/loader.py": LOADER, "plug/_config.py": "class ExtraConfig:\n    pass\n",
              "plug/install.py": installer, "plug/model.py": USES_STAND_IN}
    expect(run_scan(host, host, plugin, checks=(ImportsCheck(),)), expected)


# -- class-path strings the host imports by name (vllm-spyre worker_cls, vllm-lens worker_extension_cls,
#    vllm-rbln ModelRegistry.register_model(arch, "mod:Cls")) must resolve in the plugin --

PLATFORM = """
from host.registry import ModelRegistry

MODEL = "plug.models:MyModel"


class Platform:
    @classmethod
    def check_and_update_config(cls, vllm_config):
        vllm_config.parallel_config.worker_cls = "plug.worker.{worker}"
        ModelRegistry.register_model("Arch", MODEL)
        return dict(worker_extension_cls="plug.worker.Extension")
"""
CLASS_PATH_PLUGIN = {"plug/worker.py": "class MyWorker:\n    pass\n\n\nclass Extension:\n    pass\n",
                     "plug/models.py": "class MyModel:\n    pass\n"}
REGISTRY = {"host/registry.py": "class ModelRegistry:\n    @staticmethod\n    def register_model(arch, path):\n"
                                "        pass\n"}


@pytest.mark.parametrize(("worker", "models", "expected"), [
    ("MyWorker", "class MyModel:\n    pass\n", ["no PP0006"]),
    ("OldWorker", "class MyModel:\n    pass\n", ["PP0006 error latent"]),  # renamed, the string not
    ("MyWorker", "class Other:\n    pass\n", ["PP0006 error latent"]),  # "mod:Cls" form, via a constant
])
def test_class_path_strings_resolve_in_the_plugin(worker, models, expected):
    from pinport.checks.aliases import AliasesCheck
    plugin = {**CLASS_PATH_PLUGIN, "plug/models.py": models, "plug/platform.py": PLATFORM.format(worker=worker)}
    result = run_scan(REGISTRY, REGISTRY, plugin, checks=(AliasesCheck(),))
    expect(result, expected)
    for f in result.findings:
        assert f.plugin.path == "plug/platform.py" and f.args["path"] in ("plug.worker.OldWorker", "plug.models.MyModel")
