"""A tiny real host package (two releases, built as wheels here) and a synthetic plugin that patches it.

`tinyhost` 1.0 has everything the plugin uses; 2.0 moves `helper` to another module, drops the
`Engine.legacy` attribute the plugin keeps in a patch-class body, and the plugin skips its
`RunnerPatch` on 2.x (a patch that silently does not apply). Both releases have a parallel `Runner`
that `TINYHOST_FAST=1` selects instead of the patched one. The plugin also imports a compiled
extension its source tree lacks (`tinyplug._C`) and an optional dependency nobody installed.
The releases are installed into venvs by the gate's own `make_env`, from a local find-links
directory (pip's index off), with pytest taken from pip's configured index once per session.
"""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from pinport.gate import make_env
from pinport.sources import Cache

_RUNNER = """\
class Runner:
    def prepare(self):
        return None

    def execute(self):
        return "{name}"

    def close(self):
        return None
"""
HOST_COMMON = {
    # the host's flag module is not called `envs` (the plugin's `env-module` setting names it); an
    # `envs` module with the same flag is a decoy the gate must not read
    "tinyhost/flags.py": 'import os\nTINYHOST_FAST = os.environ.get("TINYHOST_FAST", "0") == "1"\n',
    "tinyhost/envs.py": 'TINYHOST_FAST = "not the flag module"\n',
    "tinyhost/workers/__init__.py": "",
    "tinyhost/workers/runner.py": _RUNNER.format(name="host"),
    # a parallel implementation of the patched Runner, chosen by an environment flag
    "tinyhost/workers/fast_runner.py": _RUNNER.format(name="fast"),
    "tinyhost/workers/worker.py": """\
from tinyhost import flags
from tinyhost.workers.fast_runner import Runner as FastRunner
from tinyhost.workers.runner import Runner


def make_runner():
    if flags.TINYHOST_FAST:
        return FastRunner()
    return Runner()
""",
}
HOST = {
    "1.0": {
        "tinyhost/__init__.py": '__version__ = "1.0"\n',
        "tinyhost/utils.py": "def helper(x):\n    return x\n",
        "tinyhost/engine.py": ('class Engine:\n    legacy = True\n\n    def step(self):\n        return "host"\n\n'
                               '    def run(self):\n        return self.step()\n'),
    },
    "2.0": {
        "tinyhost/__init__.py": '__version__ = "2.0"\n',
        "tinyhost/utils.py": "def other(x):\n    return x\n",
        "tinyhost/helpers.py": "def helper(x):\n    return x\n",
        "tinyhost/engine.py": ('class Engine:\n    def step(self):\n        return "host"\n\n'
                               '    def run(self):\n        return self.step()\n'),
    },
}

PLUGIN = {
    "pyproject.toml": """\
        [project]
        name = "tinyplug"
        version = "0.1"
        dependencies = ["tinyhost==1.0"]

        [project.entry-points."tinyhost.plugins"]
        tinyplug = "tinyplug.plugin:register"

        [tool.pinport]
        host = "tinyhost"
        plugin-package = "tinyplug"
        patch-helpers = ["Patch"]
        env-module = "flags"

        [tool.pinport.gate]
        entry-point-group = "tinyhost.plugins"
        env = { TINYPLUG_ENABLED = "1" }
        """,
    "tinyplug/__init__.py": "",
    "tinyplug/patching.py": """\
        class Patch:
            def __class_getitem__(cls, target):
                return type(f"Patch[{target.__name__}]", (cls,), {"_target": target})

            @classmethod
            def apply(cls):
                for name, value in list(vars(cls).items()):
                    if not name.startswith("__") and name != "_target":
                        setattr(cls._target, name, value)
        """,
    "tinyplug/engine_patch.py": """\
        from tinyhost.engine import Engine
        from tinyhost.utils import helper
        from tinyplug.patching import Patch


        class EnginePatch(Patch[Engine]):
            _orig_legacy = Engine.legacy

            def step(self):
                return "plugin " + helper("x")
        """,
    "tinyplug/runner_patch.py": """\
        from tinyhost.workers.runner import Runner
        from tinyplug.patching import Patch


        class RunnerPatch(Patch[Runner]):
            def execute(self):
                return "plugin"
        """,
    "tinyplug/kernels.py": """\
        import tinyplug_optional_dependency
        from tinyplug._C import fast_op


        def run():
            return fast_op(tinyplug_optional_dependency)
        """,
    "tinyplug/plugin.py": """\
        import os

        import tinyhost


        def register():
            if os.environ.get("TINYPLUG_ENABLED") != "1":
                return
            from tinyplug.engine_patch import EnginePatch
            from tinyplug.runner_patch import RunnerPatch

            EnginePatch.apply()
            if tinyhost.__version__.startswith("1."):
                RunnerPatch.apply()
        """,
    "tests/test_engine.py": """\
        from tinyplug.engine_patch import EnginePatch


        def test_patch_class():
            assert EnginePatch.step
        """,
}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(files: dict[str, str], version: str, out: Path) -> Path:
    """A pure-Python wheel of tinyhost, written directly (the format is a zip with a dist-info)."""
    info = f"tinyhost-{version}.dist-info"
    entries = {rel: text.encode() for rel, text in files.items()}
    entries[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: tinyhost\nVersion: {version}\n".encode()
    entries[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: pinport-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = "".join(f"{rel},{_record_hash(data)},{len(data)}\n" for rel, data in entries.items())
    entries[f"{info}/RECORD"] = (record + f"{info}/RECORD,,\n").encode()
    path = out / f"tinyhost-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for rel, data in entries.items():
            wheel.writestr(rel, data)
    return path


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory) -> Path:
    """Both tinyhost wheels, plus pytest and what it needs (from pip's configured index, once)."""
    out = tmp_path_factory.mktemp("wheels")
    for version, files in HOST.items():
        build_wheel({**HOST_COMMON, **files}, version, out)
    done = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "-d", str(out), "pytest"],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.fail(f"pip download pytest failed: {done.stderr.strip().splitlines()[-1:]}")
    return out


@pytest.fixture(scope="session")
def host_envs(tmp_path_factory, wheelhouse):
    """version -> GateEnv: tinyhost installed by make_env into a cache of the test's own."""
    cache = Cache(tmp_path_factory.mktemp("cache"))
    # pip's index is switched off only while these envs are built: pinport honours PIP_NO_INDEX too,
    # and a session-wide setting would hide the package index from every later real-release test.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PIP_NO_INDEX", "1")
        patch.setenv("PIP_FIND_LINKS", str(wheelhouse))
        envs = {version: make_env("tinyhost", version, cache=cache) for version in HOST}
    yield envs, cache


@pytest.fixture
def plugin_tree(tmp_path) -> Path:
    return write_tree(tmp_path / "tinyplug", PLUGIN)


@pytest.fixture
def host_trees(tmp_path) -> dict[str, Path]:
    return {v: write_tree(tmp_path / f"tinyhost-{v}", {**HOST_COMMON, **files}) for v, files in HOST.items()}
