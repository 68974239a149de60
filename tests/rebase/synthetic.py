"""A synthetic plugin git repository and two host versions for the rebase tests.

Host `hostlib` 0.2.0 -> 0.4.0 moves `helper` to `hostlib.helpers` (#4), gives `Runner.step`
an optional `budget` (#1), drops `Runner.load`'s `strict` (#2) and `gone` (#6), and requires a
newer torch. The plugin `demo_plugin` has `main` pinned to 0.1.0, `rebase/hostlib_v2` pinned to
0.2.0 with a validation record, and `rebase/hostlib_v3` pinned to 0.3.0 without one.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

from tests.ledger.gitrepo import ScratchRepo

from scenarios import DRAIN, DRAINING_ENGINE, MIRRORED_STEP, engine_patch


def _dedent(files: dict[str, str]) -> dict[str, str]:
    return {rel: textwrap.dedent(text).lstrip("\n") for rel, text in files.items()}


HOST_OLD = _dedent({
    "hostlib/__init__.py": "",
    "hostlib/utils.py": """
        def helper(x):
            return x


        def kept():
            return 1


        def gone():
            return 2
        """,
    "hostlib/runner.py": """
        class Runner:
            def step(self, batch):
                return batch

            def load(self, path, strict):
                return path
        """,
    "hostlib-0.2.0.dist-info/METADATA": "Name: hostlib\nVersion: 0.2.0\nRequires-Dist: torch==2.1.0\n"
                                         "Requires-Dist: protobuf>=4.21\n",
})

HOST_OLD["hostlib/engine.py"] = DRAINING_ENGINE.lstrip("\n")  # the mirror tests' Engine
# NEW counts steps per item (a clean merge into the plugin's `step`) and no longer keeps `config`
# (the merge of `drain`, whose plugin line reads `self.config`, is clean but fails verification)
ENGINE_NEW = HOST_OLD["hostlib/engine.py"].replace("        self.steps += 1\n", "        self.steps += len(batch)\n") \
    .replace("        self.config = config\n", "").replace("        results = []\n",
                                                          "        results: list = []\n")

HOST_NEW = _dedent({
    "hostlib/__init__.py": "",
    "hostlib/utils.py": """
        def kept():
            return 1
        """,
    "hostlib/helpers.py": """
        def helper(x):
            return x
        """,
    "hostlib/runner.py": """
        class Runner:
            def step(self, batch, budget=None):
                return batch

            def load(self, path):
                return path


        def make_runner():
            return Runner()
        """,
    "hostlib/engine.py": "",
    "hostlib-0.4.0.dist-info/METADATA": "Name: hostlib\nVersion: 0.4.0\nRequires-Dist: torch==2.3.0\n"
                                         "Requires-Dist: protobuf>=4.21\n"
                                         "Requires-Dist: pytest; extra == \"test\"\n",
})

HOST_NEW["hostlib/engine.py"] = ENGINE_NEW

TOOL = """
[tool.pinport]
host = "hostlib"
plugin-package = "demo_plugin"
rebase-branch-pattern = "rebase/hostlib_v*"
aligned-requirements = ["torch", "protobuf"]
patch-helpers = ["ArcticPatch"]
pin-sources = [{kind = "requirement", extra = "host"}]
"""


def pyproject(pin: str) -> str:
    return textwrap.dedent(f"""
        [build-system]
        requires = [
            "setuptools>=61",
            # keep in step with the host's torch
            "torch==2.1.0",
            "protobuf==4.25.0",
        ]

        [project]
        name = "demo_plugin"
        version = "0.1"

        [project.optional-dependencies]
        host = [
            'hostlib=={pin}',  # the pin
        ]
        embedding = ["hostlib==0.1.0", "protobuf==3.20.0"]  # its own older host
        """).lstrip("\n") + TOOL


PATCHING = """
from typing import Generic, TypeVar

T = TypeVar("T")


class ArcticPatch(Generic[T]):
    pass
"""

PATCHES = """
from hostlib.utils import helper, kept  # helpers
from hostlib.utils import gone
from hostlib.runner import Runner

from demo_plugin.patching import ArcticPatch


class RunnerPatch(ArcticPatch[Runner]):
    _orig_step = Runner.step

    def step(self, batch):
        batch = helper(batch)
        return self._orig_step(batch)


class MyRunner(Runner):
    def load(self, path, strict):
        return super().load(path, strict)


def use():
    return kept() + gone()
"""

# the plugin's copies of Engine.drain (tracing each item) and Engine.step (skipping padding, a changed value)
ENGINE_PATCH = "\nfrom hostlib.engine import Engine\n\nfrom demo_plugin.patching import ArcticPatch\n\n\n" + engine_patch(
    DRAIN.replace("            results.append(self.compute(item))\n",
                  "            results.append(self.compute(item))\n            self.config.trace(item)  # plugin: trace each item\n"),
    MIRRORED_STEP.replace("value = self.compute(item)", "value = self.compute(item) + 1"))

TEST_PATCHES = """
from demo_plugin.patches import MyRunner


def test_load():
    assert MyRunner().load("x") == "x"
"""

TEST_OTHER = """
from demo_plugin import other


def test_other():
    assert other.VALUE == 1
"""


@dataclass
class Synthetic:
    repo: ScratchRepo
    old_host: Path
    new_host: Path
    shas: dict[str, str]

    @property
    def root(self) -> Path:
        return self.repo.root


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def build(tmp: Path, layout: str = "") -> Synthetic:
    """The repository; `layout="src/"` puts the package under src/ (the tests stay at the root)."""
    old_host = _write(tmp / "host-0.2.0", HOST_OLD)
    new_host = _write(tmp / "host-0.4.0", HOST_NEW)
    repo = ScratchRepo(tmp / "demo")
    files = {
        "pyproject.toml": pyproject("0.1.0"),
        f"{layout}demo_plugin/__init__.py": "",
        f"{layout}demo_plugin/patching.py": PATCHING.lstrip("\n"),
        f"{layout}demo_plugin/patches.py": PATCHES.lstrip("\n"),
        f"{layout}demo_plugin/other.py": "VALUE = 1\n",
        f"{layout}demo_plugin/engine_patch.py": ENGINE_PATCH.lstrip("\n"),
        "tests/test_patches.py": TEST_PATCHES.lstrip("\n"),
        "tests/test_other.py": TEST_OTHER.lstrip("\n"),
    }
    shas = {"main": repo.commit("start on hostlib 0.1.0", files)}
    repo.git("switch", "-q", "-c", "rebase/hostlib_v2")
    shas["rebase/hostlib_v2"] = repo.commit("rebase to 0.2.0, validated", {
        "pyproject.toml": pyproject("0.2.0"),
        "docs/REBASE_TEST.md": "# validated on GPU\n"})
    repo.git("switch", "-q", "-c", "rebase/hostlib_v3", shas["main"])
    shas["rebase/hostlib_v3"] = repo.commit("rebase to 0.3.0, not finished", {"pyproject.toml": pyproject("0.3.0")})
    repo.git("switch", "-q", "main")
    return Synthetic(repo, old_host, new_host, shas)
