"""Determinism for real: the same command in two fresh interpreters, each with its own string-hash
seed (`PYTHONHASHSEED`) and its own empty index cache, writes the same bytes.

Within one process `f(x) == f(x)` cannot fail on set or dict order that follows string hashing;
two processes with different seeds do, and two cold caches rule out one run reading the other's.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import scenarios
from harness import write_tree

SEEDS = ("1", "4242")


def pinport(args: list[str], seed: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """`pinport ARGS` in a fresh interpreter of this environment, with its own hash seed."""
    env = {**os.environ, "PYTHONHASHSEED": seed}
    return subprocess.run([sys.executable, "-c", "from pinport.cli.main import entry; entry()", *args],
                          cwd=cwd, env=env, capture_output=True, timeout=900)


def twice(args: list[str], cwd: Path, cache_option: bool = True) -> tuple[bytes, bytes]:
    """The standard output of two runs with different seeds (each with a cache of its own)."""
    outputs = []
    for seed in SEEDS:
        extra = ["--cache-dir", str(cwd / f"cache-{seed}")] if cache_option else []
        done = pinport([*args, *extra], seed, cwd)
        assert done.returncode in (0, 1), done.stderr.decode()
        outputs.append(done.stdout)
    return outputs[0], outputs[1]


# A plugin that trips most checks at once: signatures, calls, aliases, imports, attributes, a fork,
# a copied line and a mirror, so that many findings of many kinds must come out in one order.
OLD = {
    "host/__init__.py": "",
    "host/runner.py": "class Runner:\n    def __init__(self):\n        self.pin_memory = True\n        self.device = 0\n\n"
                      "    def load(self, a, model=None):\n        return a\n\n    def step(self, batch, spec=None):\n"
                      "        return self.load(1, model=2)\n\n    def gone(self):\n        pass\n",
    "host/helpers.py": "def helper(a):\n    pass\n\n\ndef flash_supports_fp8(device):\n    return True\n",
    "host/engine.py": scenarios.ENGINE,
    "host/backend.py": scenarios.BACKEND,
    "host/base.py": scenarios.BASE,
}
NEW = {
    **OLD,
    "host/runner.py": "class Runner:\n    def __init__(self):\n        self.device = 0\n\n"
                      "    def load(self, a, model=None, *, strict=False):\n        return a\n\n"
                      "    def step(self, batch, metadata=None):\n        return self.load(1, model=2, strict=True)\n",
    "host/helpers.py": "def helper(a, out):\n    pass\n\n\ndef flash_supports_quant(device):\n    return True\n",
    "host/engine.py": scenarios.ENGINE.replace("self.steps += 1", "self.steps += len(batch)"),
    "host/backend.py": scenarios.BACKEND.replace("kv_cache.unbind(0)", "kv_cache.unbind(1)"),
}
PLUGIN = {
    "pyproject.toml": '[project]\nname = "plug"\n\n[tool.pinport]\nhost = "host"\nplugin-package = "plug"\n'
                      'patch-helpers = ["ArcticPatch"]\n',
    "plug/__init__.py": "",
    **scenarios.PATCHING,
    "plug/patch.py": "from plug.patching import ArcticPatch\nfrom host.runner import Runner\n"
                     "from host.helpers import helper, flash_supports_fp8\n\n\n"
                     "class RunnerPatch(ArcticPatch[Runner]):\n    _orig_gone = Runner.gone\n\n"
                     "    def load(self, a, model=None):\n        helper(a)\n        return self.pin_memory\n\n"
                     "    def step(self, batch, spec=None):\n        return flash_supports_fp8(batch), spec\n",
    "plug/engine_patch.py": scenarios.MIRROR,
    "plug/tree_backend.py": scenarios.FORK,
    "plug/kv.py": scenarios.SECOND_SITE,
}


def _untimed(text: bytes) -> bytes:
    """The text report's last line says how long the scan took: the one byte range allowed to differ."""
    return re.sub(rb"scanned in \d+\.\d+s", b"scanned in <time>", text)


@pytest.fixture
def trees(tmp_path: Path) -> Path:
    for name, files in (("old", OLD), ("new", NEW), ("plugin", PLUGIN)):
        write_tree(tmp_path / name, files)
    return tmp_path


@pytest.mark.parametrize("fmt", ["json", "text", "sarif", "markdown"])
def test_scan_output_is_the_same_bytes_under_two_hash_seeds(trees: Path, fmt: str):
    args = ["scan", "--plugin", "plugin", "--old", "old", "--new", "new", "--format", fmt, "--no-progress",
            "--show-fixed"]
    first, second = (_untimed(out) for out in twice(args, trees))
    assert first == second
    if fmt == "json":
        import json

        codes = {f["code"] for f in json.loads(first)["findings"]}
        assert len(codes) >= 8, codes  # many kinds, so that their order is what is compared


def test_ledger_output_is_the_same_bytes_under_two_hash_seeds(tmp_path: Path):
    from ledger.gitrepo import ScratchRepo, pyproject

    repo = ScratchRepo(tmp_path / "repo")
    for pin, shape, params in [("0.9.2", "(n, h)", "x"), ("0.10.1", "(2, n, h)", "x, y"),
                               ("0.11.0", "(2, n, h)", "x, y, z")]:
        repo.commit(f"vllm {pin}", {
            "pyproject.toml": pyproject(pin, embedding="0.8.0"),
            "plugin/attn.py": f"def kv_cache_shape(n, h):\n    return {shape}\n",
            "plugin/runner.py": f"class Runner:\n    def forward(self, {params}):\n        pass\n",
        })
    probes = tmp_path / "probes.toml"
    probes.write_text('[[probe]]\nlabel = "kv.shape"\nfile = "plugin/attn.py"\nregex = \'return (\\(.*\\))\'\n'
                      '[[probe]]\nlabel = "runner.params"\nfile = "plugin/runner.py"\n'
                      'regex = \'def forward\\(self, ([^)]*)\\)\'\n', encoding="utf-8")
    for fmt in ("json", "text"):
        first, second = twice(["ledger", str(repo.root), "--probes", str(probes), "--format", fmt],
                              tmp_path, cache_option=False)
        assert first == second and b"kv.shape" in first


@pytest.mark.real
def test_real_release_scan_is_the_same_bytes_under_two_hash_seeds(tmp_path: Path):
    """arctic-inference 0.3.0 against vLLM 0.26.0 -> 0.33.0. Both runs share the user cache (its index
    is warm): what differs is every set and dict the checks and reports build; the synthetic scans
    above index afresh in each run."""
    from pinport.sources import Cache, fetch_release

    cache = Cache()
    plugin = fetch_release("arctic-inference", "0.3.0", cache=cache, prefer="sdist")
    old, new = (fetch_release("vllm", v, cache=cache, prefer="wheel", packages=("vllm",)) for v in ("0.26.0", "0.33.0"))
    args = ["scan", "--plugin", str(plugin.project_root or plugin.root), "--old", str(old.root),
            "--new", str(new.root), "--format", "json", "--no-progress"]
    first, second = twice(args, tmp_path, cache_option=False)
    assert first == second and first.count(b'"code"') > 50
