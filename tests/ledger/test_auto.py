"""Automatic probes from the patch surface, and the host cross-check on synthetic host sources."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import pinport.cli.ledger
import pinport.ledger.auto
import pinport.ledger.host
from pinport.cli.ledger import ledger_command
from pinport.ledger import AUTO, FlagKind, Ledger, Probe, build_ledger
from pinport.ledger.auto import (
    Scope,
    SurfaceProbes,
    alias_regex,
    body_regex,
    import_regex,
    module_import_regex,
    sig_regex,
)
from pinport.ledger.host import HostSources, registry_host
from pinport.sources import SourceTree, load_directory

from .conftest import SETTINGS
from .gitrepo import ScratchRepo, pyproject

PINS = ["0.9.2", "0.10.1", "0.11.0", "0.18.0"]

PATCHING = "class ArcticPatch:\n    def __class_getitem__(cls, target):\n        return cls\n"


def runner_module(kv_params: str, kv_from: str, *, other: bool = True) -> str:
    """A patch class with aliases and a multi-line override, and a second class with a same-named method."""
    other_class = (
        "\n\nclass WorkerPatch(ArcticPatch[Worker]):\n"
        "    def initialize_kv_cache(self, worker_only):\n"
        "        pass\n"
        if other
        else ""
    )
    return (
        "import vllm.envs as envs\n"
        "from vllm.logger import init_logger\n"
        f"from {kv_from} import (\n"
        "    cdiv,\n"
        "    is_quantized_kv_cache,\n"
        ")\n"
        "from vllm.v1.worker.gpu_model_runner import GPUModelRunner\n"
        "from vllm.v1.worker.gpu_worker import Worker\n"
        "\n"
        "from .patching import ArcticPatch\n"
        "\n"
        "\n"
        "class GPUModelRunnerPatch(ArcticPatch[GPUModelRunner]):\n"
        "\n"
        "    _orig_init = GPUModelRunner.__init__\n"
        "    _orig_initialize_kv_cache = GPUModelRunner.initialize_kv_cache  # kept\n"
        "\n"
        "    def __init__(self, vllm_config, device):\n"
        "        self._orig_init(vllm_config, device)\n"
        "\n"
        "    @staticmethod\n"
        "    def _helper(x):\n"
        "        return x\n"
        "\n"
        "    def initialize_kv_cache(\n"
        "        self,\n"
        f"{kv_params}"
        "    ) -> None:\n"
        "        self._orig_initialize_kv_cache(kv_cache_config)\n"
        f"{other_class}"
    )


PARALLEL = (
    "from vllm.distributed import parallel_state\n"
    "\n"
    "\n"
    "def graph_capture(device, context=None):\n"
    "    return device\n"
    "\n"
    "\n"
    "parallel_state.graph_capture = graph_capture\n"
)

KV_OLD = "        kv_cache_config: dict[str, tuple[int, int]],  # the layout\n"
KV_NEW = KV_OLD + "        is_profiling: bool = False,\n"


def plugin_files(pin: str, kv_params: str, kv_from: str) -> dict[str, str | None]:
    return {
        "pyproject.toml": pyproject(pin),
        "demo_plugin/__init__.py": "",
        "demo_plugin/patching.py": PATCHING,
        "demo_plugin/runner.py": runner_module(kv_params, kv_from),
        "demo_plugin/parallel.py": PARALLEL,
    }


def history(tmp_path: Path, steps: list[tuple[str, str, str]]) -> ScratchRepo:
    """One commit per (pin, kv-cache parameters, module is_quantized_kv_cache comes from)."""
    repo = ScratchRepo(tmp_path / "plugin")
    for pin, params, origin in steps:
        repo.commit(f"vllm {pin}", plugin_files(pin, params, origin))
    return repo


STEPS = [
    ("0.9.2", KV_OLD, "vllm.utils"),
    ("0.10.1", KV_OLD, "vllm.utils"),
    ("0.11.0", KV_OLD, "vllm.utils.torch_utils"),  # drift 4: the helper moved
    ("0.18.0", KV_NEW, "vllm.utils.torch_utils"),  # drift 1: a parameter added
]


def auto_ledger(root: Path, **kwargs) -> Ledger:
    return build_ledger(root, SETTINGS, (), auto_probes=SurfaceProbes(root, SETTINGS), **kwargs)


def values(ledger: Ledger) -> dict[str, tuple[str | None, ...]]:
    return {row.probe.label: row.values for row in ledger.rows}


def test_auto_rows_per_column(tmp_path: Path) -> None:
    ledger = auto_ledger(history(tmp_path, STEPS).root, include_worktree=False)
    assert ledger.pins == tuple(PINS)
    assert all(row.probe.section == AUTO for row in ledger.rows)
    rows = values(ledger)
    assert list(rows) == [  # signatures, aliases, imports; each sorted by label
        "auto.sig.GPUModelRunnerPatch.__init__",
        "auto.sig.GPUModelRunnerPatch._helper",
        "auto.sig.GPUModelRunnerPatch.initialize_kv_cache",
        "auto.sig.WorkerPatch.initialize_kv_cache",
        "auto.sig.graph_capture",
        "auto.alias.GPUModelRunnerPatch._orig_init",
        "auto.alias.GPUModelRunnerPatch._orig_initialize_kv_cache",
        "auto.import.GPUModelRunner",
        "auto.import.Worker",
        "auto.import.cdiv",
        "auto.import.init_logger",
        "auto.import.is_quantized_kv_cache",
        "auto.import.parallel_state",
        "auto.import.vllm.envs",
    ]
    old = "(self, kv_cache_config: dict[str, tuple[int, int]])"  # the comment is not part of it
    new = "(self, kv_cache_config: dict[str, tuple[int, int]], is_profiling: bool = False)"
    assert rows["auto.sig.GPUModelRunnerPatch.initialize_kv_cache"] == (old, old, old, new)
    assert rows["auto.sig.WorkerPatch.initialize_kv_cache"] == ("(self, worker_only)",) * 4
    assert rows["auto.sig.graph_capture"] == ("(device, context=None)",) * 4
    assert (
        rows["auto.alias.GPUModelRunnerPatch._orig_initialize_kv_cache"]
        == ("GPUModelRunner.initialize_kv_cache",) * 4
    )
    assert rows["auto.import.is_quantized_kv_cache"] == (
        "vllm.utils",
        "vllm.utils",
        "vllm.utils.torch_utils",
        "vllm.utils.torch_utils",
    )
    assert rows["auto.import.vllm.envs"] == ("vllm.envs",) * 4
    by_label = {row.probe.label: row.probe for row in ledger.rows}
    assert by_label["auto.import.parallel_state"].file == "demo_plugin/parallel.py"
    assert not any(p.host_file for p in by_label.values())  # no host sources: no counterparts


def test_member_gone_in_older_snapshot_is_no_match_not_another_class(tmp_path: Path) -> None:
    repo = ScratchRepo(tmp_path / "plugin")
    files = plugin_files("0.10.1", KV_OLD, "vllm.utils")
    without = runner_module(KV_OLD, "vllm.utils").replace(
        "    def initialize_kv_cache(\n        self,\n" + KV_OLD + "    ) -> None:\n"
        "        self._orig_initialize_kv_cache(kv_cache_config)\n",
        "",
    )
    repo.commit(
        "vllm 0.9.2",
        {**files, "pyproject.toml": pyproject("0.9.2"), "demo_plugin/runner.py": without},
    )
    repo.commit("vllm 0.10.1", files)
    rows = values(auto_ledger(repo.root))
    # the WorkerPatch method of the same name further down must not be picked up
    assert rows["auto.sig.GPUModelRunnerPatch.initialize_kv_cache"][0] is None
    assert rows["auto.sig.WorkerPatch.initialize_kv_cache"] == ("(self, worker_only)",) * 2


def test_derived_at_the_work_tree_when_it_is_the_newest_column(tmp_path: Path) -> None:
    repo = history(tmp_path, STEPS[:2])
    repo.write(
        {
            "pyproject.toml": pyproject("0.11.0"),
            "demo_plugin/extra.py": "from vllm.config import VllmConfig\n",
        }
    )
    ledger = auto_ledger(repo.root)
    assert ledger.pins == ("0.9.2", "0.10.1", "0.11.0")
    assert values(ledger)["auto.import.VllmConfig"] == (None, None, "vllm.config")


def test_equal_names_in_two_files_are_told_apart_by_module(tmp_path: Path) -> None:
    repo = history(tmp_path, STEPS[:2])
    other = "from vllm.logging import init_logger\n"  # the same name from another module
    repo.commit("more", {"demo_plugin/sub/__init__.py": "", "demo_plugin/sub/log.py": other})
    rows = values(auto_ledger(repo.root))
    assert rows["auto.import.init_logger@runner"] == ("vllm.logger", "vllm.logger")
    assert rows["auto.import.init_logger@sub.log"] == (None, "vllm.logging")
    assert "auto.import.init_logger" not in rows


def test_src_layout_paths_are_plugin_relative(tmp_path: Path) -> None:
    repo = ScratchRepo(tmp_path / "plugin")
    for pin, params, origin in STEPS[:2]:
        files = plugin_files(pin, params, origin)
        repo.commit(
            f"vllm {pin}", {k if k == "pyproject.toml" else f"src/{k}": v for k, v in files.items()}
        )
    ledger = auto_ledger(repo.root)
    probe = next(r.probe for r in ledger.rows if r.probe.label == "auto.sig.graph_capture")
    assert probe.file == "src/demo_plugin/parallel.py"
    assert values(ledger)["auto.sig.graph_capture"] == ("(device, context=None)",) * 2


def test_no_python_package_means_no_auto_probes(tmp_path: Path) -> None:
    repo = ScratchRepo(tmp_path / "plugin")
    repo.commit("vllm 0.9.2", {"pyproject.toml": pyproject("0.9.2"), "plugin/attn.py": "X = 1\n"})
    probes = (Probe("x", "plugin/attn.py", r"X = (\d)"),)
    ledger = build_ledger(
        repo.root, SETTINGS, probes, auto_probes=SurfaceProbes(repo.root, SETTINGS)
    )
    assert [r.probe.label for r in ledger.rows] == ["x"]


# -- the regexes on their own -----------------------------------------------------------------

METHOD = (Scope("class", "Patch", 0), Scope("def", "run", 4))


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "class Patch:\n    def run(self, a, b=(1, 2)) -> int:\n        pass\n",
            "(self, a, b=(1, 2))",
        ),
        (
            "class Patch(\n    Base,\n):\n    @decorated(x=1)\n    async def run(\n        self,\n"
            "        a: Callable[[int], tuple[int, ...]] = f(g(1)),\n    ):\n        pass\n",
            "(self, a: Callable[[int], tuple[int, ...]] = f(g(1)))",
        ),
        (
            "class Patch:\n    '''doc'''\n\n# a comment at column 0\n    x = 1\n\n    def run(self):\n"
            "        pass\n",
            "(self)",
        ),
        (
            "class Patch:\n    pass\n\n\nclass Other:\n    def run(self, other):\n        pass\n",
            None,
        ),
        (
            "class Other:\n    def run(self, other):\n        pass\n\n\nclass Patch:\n    def run(self, mine):\n"
            "        pass\n",
            "(self, mine)",
        ),
        ("class Patch:\n    def setup(self):\n        def run(inner):\n            pass\n", None),
        ("class PatchMore:\n    def run(self, x):\n        pass\n", None),
    ],
)
def test_signature_regex(source: str, expected: str | None) -> None:
    probe = Probe("p", "f.py", sig_regex(METHOD), multiline=True, strip_comments=True)
    assert probe.evaluate(source) == expected


def test_signature_regex_of_nested_and_module_functions() -> None:
    nested = (Scope("class", "Outer", 0), Scope("class", "Inner", 4), Scope("def", "f", 8))
    source = "class Outer:\n    class Inner:\n        def f(self, y):\n            pass\n"
    assert Probe("p", "f.py", sig_regex(nested)).evaluate(source) == "(self, y)"
    top = (Scope("def", "f", 0),)
    assert (
        Probe("p", "f.py", sig_regex(top)).evaluate(
            "class A:\n    def f(a):\n        pass\ndef f(b):\n    pass\n"
        )
        == "(b)"
    )


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("class Patch:\n    _orig_x = Target.x  # keep\n", "Target.x"),
        ("class Patch:\n    _orig_x: Callable = Target.x\n", "Target.x"),
        (
            "class Other:\n    _orig_x = Other.x\n\nclass Patch:\n    _orig_x = Target.y\n",
            "Target.y",
        ),
        ("class Patch:\n    pass\n\n_orig_x = Target.x\n", None),
    ],
)
def test_alias_regex(source: str, expected: str | None) -> None:
    probe = Probe(
        "p", "f.py", alias_regex((Scope("class", "Patch", 0),), "_orig_x", 4), multiline=True
    )
    assert probe.evaluate(source) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from vllm.a import x, name\n", "vllm.a"),
        ("from vllm.a import (\n    x,\n    name,\n)\n", "vllm.a"),
        ("from vllm.a import (x)\nfrom vllm.b import name\n", "vllm.b"),  # never across statements
        ("from vllm.a import x\nname = 1\nfrom vllm.b import name as other\n", "vllm.b"),
        ("from vllm.a import name_longer\n", None),
        ("from vllm.a import other as name\n", None),
        ("    from vllm.a import x, \\\n        name\n", "vllm.a"),
        ("from vllm.a import x  # name\n", None),
    ],
)
def test_import_regex(source: str, expected: str | None) -> None:
    assert Probe("p", "f.py", import_regex("name")).evaluate(source) == expected


def test_module_import_regex() -> None:
    probe = Probe("p", "f.py", module_import_regex("vllm.envs"))
    assert probe.evaluate("import os, vllm.envs as envs\n") == "vllm.envs"
    assert probe.evaluate("import vllm.envs_extra\nimport vllm.envs.sub\n") is None


# -- the host cross-check ------------------------------------------------------------------------

RUNNER_HOST = (
    "class GPUModelRunnerBase:\n"
    "    def initialize_kv_cache(self, {params}):\n"
    "        pass\n"
    "\n"
    "\n"
    "class GPUModelRunner(GPUModelRunnerBase):\n"
    "    def __init__(self, vllm_config, device):\n"
    "        pass\n"
)
WORKER_HOST = "class Worker:\n    def initialize_kv_cache(self):\n        pass\n"


def host_tree(root: Path, kv_params: str) -> SourceTree:
    files = {
        "vllm/__init__.py": "",
        "vllm/envs.py": "",
        "vllm/logger.py": "def init_logger(name):\n    pass\n",
        "vllm/utils/__init__.py": "def cdiv(a, b):\n    pass\n",
        "vllm/utils/torch_utils.py": "def is_quantized_kv_cache(x):\n    pass\n",
        "vllm/distributed/__init__.py": "",
        "vllm/distributed/parallel_state.py": "def graph_capture(device, context=None):\n    pass\n",
        "vllm/v1/__init__.py": "",
        "vllm/v1/worker/__init__.py": "",
        "vllm/v1/worker/gpu_model_runner_base.py": RUNNER_HOST.format(params=kv_params),
        "vllm/v1/worker/gpu_model_runner.py": "from .gpu_model_runner_base import GPUModelRunner\n",
        "vllm/v1/worker/gpu_worker.py": WORKER_HOST,
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return load_directory(root, "vllm")


@pytest.fixture
def fake_host(tmp_path: Path) -> tuple[HostSources, list[str]]:
    """The host at 0.11.0 and 0.18.0 (initialize_kv_cache gains is_profiling), loads counted."""
    upstream = {
        "0.10.1": "kv_cache_config",
        "0.11.0": "kv_cache_config",
        "0.18.0": "kv_cache_config, is_profiling=False",
    }
    loaded: list[str] = []

    def load(version: str) -> SourceTree:
        loaded.append(version)
        return host_tree(tmp_path / f"host-{version}", upstream[version])

    return HostSources(load), loaded


def test_counterpart_is_the_base_def_at_the_newest_pin(
    tmp_path: Path, fake_host: tuple[HostSources, list[str]]
) -> None:
    host, loaded = fake_host
    root = history(tmp_path, STEPS[:3]).root
    ledger = build_ledger(
        root, SETTINGS, (), auto_probes=SurfaceProbes(root, SETTINGS, host=host), host=host
    )
    probes = {row.probe.label: row.probe for row in ledger.rows}
    kv = probes["auto.sig.GPUModelRunnerPatch.initialize_kv_cache"]
    assert kv.host_file == "vllm/v1/worker/gpu_model_runner_base.py"  # inherited: the base's file
    assert kv.evaluate_host(host("0.11.0", kv.host_file)) == "(self, kv_cache_config)"
    assert probes["auto.sig.graph_capture"].host_file == "vllm/distributed/parallel_state.py"
    assert (
        probes["auto.sig.WorkerPatch.initialize_kv_cache"].host_file
        == "vllm/v1/worker/gpu_worker.py"
    )
    assert probes["auto.sig.GPUModelRunnerPatch._helper"].host_file == ""  # added by the plugin
    assert sorted(loaded) == ["0.10.1", "0.11.0"]  # each pin's tree loaded once


@pytest.mark.parametrize(
    ("newest_params", "expected"),
    [
        (
            KV_OLD,
            [FlagKind.HOST_CHANGED],
        ),  # upstream gained is_profiling, the plugin did not follow
        (KV_NEW, []),  # both moved: ported
    ],
)
def test_host_changed_when_upstream_moved_and_the_plugin_did_not(
    tmp_path: Path, fake_host: tuple[HostSources, list[str]], newest_params: str, expected: list
) -> None:
    host, _ = fake_host
    steps = [
        ("0.10.1", KV_OLD, "vllm.utils"),
        ("0.11.0", KV_OLD, "vllm.utils.torch_utils"),
        ("0.18.0", newest_params, "vllm.utils.torch_utils"),
    ]
    root = history(tmp_path, steps).root
    ledger = build_ledger(
        root, SETTINGS, (), auto_probes=SurfaceProbes(root, SETTINGS, host=host), host=host
    )
    flags = [f for f in ledger.flags if f.kind is FlagKind.HOST_CHANGED]
    assert [f.kind for f in flags] == expected
    if flags:
        (flag,) = flags
        assert flag.probe == "auto.sig.GPUModelRunnerPatch.initialize_kv_cache"
        assert flag.columns == ("0.11.0", "0.18.0")
        assert flag.values == (
            "(self, kv_cache_config)",
            "(self, kv_cache_config, is_profiling=False)",
        )
    # the members upstream left alone raise nothing
    assert {f.probe for f in ledger.flags} <= {"auto.sig.GPUModelRunnerPatch.initialize_kv_cache"}


def test_host_reader_stays_inside_the_tree(fake_host: tuple[HostSources, list[str]]) -> None:
    host, _ = fake_host
    assert host("0.11.0", "vllm/logger.py").startswith("def init_logger")
    assert host("0.11.0", "vllm/missing.py") is None
    assert host("0.11.0", "../host-0.18.0/vllm/logger.py") is None


def test_registry_host_fetches_each_version_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls = []

    def fetch(dist: str, version: str, **kwargs) -> SourceTree:
        calls.append((dist, version, kwargs["prefer"], kwargs["packages"]))
        return host_tree(tmp_path / version, "kv_cache_config")

    monkeypatch.setattr(pinport.ledger.host, "fetch_release", fetch)
    host = registry_host(SETTINGS)
    for _ in range(3):
        assert host("0.11.0", "vllm/envs.py") == ""
    host.index("0.11.0")
    assert calls == [("vllm", "0.11.0", "wheel", ("vllm",))]


# -- the command line -------------------------------------------------------------------------


@pytest.fixture
def cli_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PINPORT_CACHE_DIR", str(tmp_path / "cache"))
    steps = [("0.10.1", KV_OLD, "vllm.utils"), ("0.11.0", KV_OLD, "vllm.utils.torch_utils")]
    steps.append(("0.18.0", KV_OLD, "vllm.utils.torch_utils"))
    return history(tmp_path, steps).root


def run_json(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(ledger_command, [*args, "--format", "json"], catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout)


def test_cli_auto_is_on_by_default(cli_repo: Path) -> None:
    code, data = run_json(str(cli_repo))
    assert code == 0
    labels = [r["label"] for r in data["rows"] if r["section"] == "auto"]
    assert "auto.sig.GPUModelRunnerPatch.initialize_kv_cache" in labels
    assert "auto.import.is_quantized_kv_cache" in labels
    assert run_json(str(cli_repo), "--no-auto")[1]["rows"] == []


def test_cli_host_check(
    cli_repo: Path, monkeypatch: pytest.MonkeyPatch, fake_host: tuple[HostSources, list[str]]
) -> None:
    settings_seen = []

    def fake_registry_host(settings, **kwargs) -> HostSources:
        settings_seen.append(settings.host_dist)
        return fake_host[0]

    monkeypatch.setattr(pinport.cli.ledger, "registry_host", fake_registry_host)
    code, data = run_json(str(cli_repo))
    assert code == 0 and settings_seen == []  # no --host-check: no host sources asked for
    code, data = run_json(str(cli_repo), "--host-check")
    assert code == 1 and settings_seen == ["vllm"]
    assert [(f["kind"], f["probe"]) for f in data["flags"]] == [
        ("HOST_CHANGED", "auto.sig.GPUModelRunnerPatch.initialize_kv_cache")
    ]
    row = next(
        r for r in data["rows"] if r["label"] == "auto.sig.GPUModelRunnerPatch.initialize_kv_cache"
    )
    assert row["host_file"] == "vllm/v1/worker/gpu_model_runner_base.py"


def test_cli_auto_failure_names_the_way_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PINPORT_CACHE_DIR", str(tmp_path / "cache"))
    repo = ScratchRepo(tmp_path / "two")
    files = {
        "pyproject.toml": pyproject("0.9.2", name="two"),
        "pkg_a/__init__.py": "",
        "pkg_b/__init__.py": "",
    }
    repo.commit("vllm 0.9.2", files)
    result = CliRunner().invoke(ledger_command, [str(repo.root)])
    assert result.exit_code == 2
    assert (
        result.stderr.startswith("pinport: error: auto probes: ") and "--no-auto" in result.stderr
    )
    assert CliRunner().invoke(ledger_command, [str(repo.root), "--no-auto"]).exit_code == 0


def test_all() -> None:
    assert all(hasattr(pinport.ledger.auto, name) for name in pinport.ledger.auto.__all__)
    assert re.fullmatch(r"auto\.sig", pinport.ledger.auto.SIG)


def test_body_regex_takes_the_whole_def_and_stops_at_the_next_member() -> None:
    source = (
        "class Patch:\n"
        "    def run(self, a,\n"
        "            b):\n"
        "        x = a\n"
        "\n"
        "        return x + b\n"
        "    def other(self):\n"
        "        return 0\n"
    )
    probe = Probe("m", "f.py", body_regex(METHOD), multiline=True, digest=True, strip_comments=True)
    value = probe.evaluate(source)
    assert value is not None and value.startswith("#")
    assert probe.evaluate(source.replace("return 0", "return 1")) == value  # another member changed
    assert probe.evaluate(source.replace("x + b", "x - b")) != value  # the body changed
    plain = Probe("m", "f.py", body_regex(METHOD), multiline=True)
    assert plain.evaluate(source).endswith("return x + b")
