"""Time `build_ledger` on a synthetic plugin history: 10 pins (8 on main, 2 rebase branches) x 40 probes.

Run: python bench/ledger_speed.py [--commits-between N] [--auto]. Target: <= 3 s per build.
With --auto the plugin is a package whose probed functions are patch-class members (with
`_orig_*` aliases and host imports), and the build adds the auto probes derived from it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from pinport.config import PinSource, load_settings
from pinport.ledger import AUTO, Probe, build_ledger
from pinport.ledger.auto import SurfaceProbes
from pinport.model.index import IndexCache

PINS = ["0.8.1", "0.8.4", "0.9.0.1", "0.9.2", "0.10.1", "0.11.0", "0.14.1", "0.18.0"]
BRANCH_PINS = ["0.24.0", "0.26.0"]
FILES = 10
PROBES_PER_FILE = 4
LINES_PER_FILE = 2000
TARGET_SECONDS = 3.0
ENV = {
    **os.environ,
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_SYSTEM": os.devnull,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], env=ENV, check=True, capture_output=True)


def _patch_class(f: int, probed: str) -> str:
    """The probed functions as members of a patch class, behind host imports and aliases."""
    members = "".join("    " + line if line else line for line in probed.splitlines(True))
    aliases = "".join(
        f"    _orig_probed_{p} = GPUModelRunner.probed_{p}\n" for p in range(PROBES_PER_FILE)
    )
    return (
        "from vllm.v1.worker.gpu_model_runner import GPUModelRunner\n"
        f"from vllm.utils.helpers_{f % 3} import cdiv, round_up\n"
        "from bench_plugin import ArcticPatch\n\n\n"
        f"class RunnerPatch{f}(ArcticPatch[GPUModelRunner]):\n{aliases}\n{members}\n\n"
    )


def write_snapshot(root: Path, pin: str, step: int, auto: bool = False) -> None:
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "bench_plugin"\n\n[project.optional-dependencies]\nvllm = ["vllm=={pin}"]\n'
    )
    package = root / "bench_plugin"
    package.mkdir(exist_ok=True)
    if auto:
        (package / "__init__.py").write_text("class ArcticPatch:\n    pass\n")
    filler = "".join(
        f"def helper_{i}(x):\n    return x + {i}\n" for i in range(LINES_PER_FILE // 2)
    )
    for f in range(FILES):
        probed = "".join(
            f"def probed_{p}(self, a, b{'' if (step + p + f) % 3 else ', c'}):\n"
            f"    return kv_cache.unbind({(step + p) % 2})\n"
            for p in range(PROBES_PER_FILE)
        )
        (package / f"mod_{f}.py").write_text((_patch_class(f, probed) if auto else probed) + filler)


def build_repo(root: Path, commits_between: int, auto: bool = False) -> None:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    step = 0
    for pin in PINS:
        for _ in range(commits_between + 1):
            step += 1
            write_snapshot(root, pin, step, auto)
            git(root, "add", "-A")
            git(root, "commit", "-q", "--allow-empty", "-m", f"step {step} on vllm {pin}")
    for pin in BRANCH_PINS:
        git(root, "checkout", "-q", "-b", f"rebase/vllm_v{pin}", "main")
        step += 1
        write_snapshot(root, pin, step, auto)
        git(root, "commit", "-q", "-am", f"port to vllm {pin}")
    git(root, "checkout", "-q", "main")
    write_snapshot(root, PINS[-1], step + 1, auto)  # a dirty work tree


def probes() -> list[Probe]:
    return [
        Probe(
            f"mod_{f}.probed_{p}",
            f"bench_plugin/mod_{f}.py",
            rf"def probed_{p}\(self, ([^)]*)\):",
            multiline=p % 2 == 0,
        )
        for f in range(FILES)
        for p in range(PROBES_PER_FILE)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--commits-between",
        type=int,
        default=20,
        help="commits on main between pin bumps (default 20)",
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--auto", action="store_true", help="also derive the auto probes (patch surface)"
    )
    args = parser.parse_args()
    settings = replace(load_settings(None), patch_helpers=("ArcticPatch",),
                       pin_sources=(PinSource("requirement", extra="vllm"),))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "plugin"
        started = time.perf_counter()
        build_repo(root, args.commits_between, args.auto)
        print(
            f"synthetic repo: {len(PINS) * (args.commits_between + 1) + len(BRANCH_PINS)} commits, "
            f"{FILES} files x {LINES_PER_FILE} lines, built in {time.perf_counter() - started:.1f} s"
        )
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            index_cache = IndexCache(Path(tmp) / "index.sqlite")  # warm after the first run
            derive = SurfaceProbes(root, settings, index_cache=index_cache) if args.auto else None
            ledger = build_ledger(root, settings, probes(), auto_probes=derive)
            times.append(time.perf_counter() - started)
        assert len(ledger.columns) == len(PINS) + len(BRANCH_PINS), ledger.pins
        auto = sum(row.probe.section == AUTO for row in ledger.rows)
        assert len(ledger.rows) - auto == FILES * PROBES_PER_FILE
        assert auto > 0 if args.auto else auto == 0
        print(
            f"ledger: {len(ledger.columns)} pins x {len(ledger.rows)} probes ({auto} auto), "
            f"{len(ledger.flags)} flags"
        )
        # with --auto the first build indexes the plugin (cold cache); later builds are judged
        judged = times[1:] if args.auto and len(times) > 1 else times
        verdict = "OK" if max(judged) <= TARGET_SECONDS else "SLOW"
        print(
            f"build_ledger: first {times[0]:.3f} s, best {min(times):.3f} s "
            f"(target <= {TARGET_SECONDS:.0f} s{', warm index' if judged is not times else ''}): "
            f"{verdict}"
        )


if __name__ == "__main__":
    main()
