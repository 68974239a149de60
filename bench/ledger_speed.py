"""Time `build_ledger` on a synthetic plugin history: 10 pins (8 on main, 2 rebase branches) x 40 probes.

Run: python bench/ledger_speed.py [--commits-between N]. Target: <= 3 s per build.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

from pinport.config import PinSource, Settings
from pinport.ledger import Probe, build_ledger

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


def write_snapshot(root: Path, pin: str, step: int) -> None:
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "bench_plugin"\n\n[project.optional-dependencies]\nvllm = ["vllm=={pin}"]\n'
    )
    package = root / "bench_plugin"
    package.mkdir(exist_ok=True)
    filler = "".join(
        f"def helper_{i}(x):\n    return x + {i}\n" for i in range(LINES_PER_FILE // 2)
    )
    for f in range(FILES):
        probed = "".join(
            f"def probed_{p}(self, a, b{'' if (step + p + f) % 3 else ', c'}):\n"
            f"    return kv_cache.unbind({(step + p) % 2})\n"
            for p in range(PROBES_PER_FILE)
        )
        (package / f"mod_{f}.py").write_text(probed + filler)


def build_repo(root: Path, commits_between: int) -> None:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    step = 0
    for pin in PINS:
        for _ in range(commits_between + 1):
            step += 1
            write_snapshot(root, pin, step)
            git(root, "add", "-A")
            git(root, "commit", "-q", "--allow-empty", "-m", f"step {step} on vllm {pin}")
    for pin in BRANCH_PINS:
        git(root, "checkout", "-q", "-b", f"rebase/vllm_v{pin}", "main")
        step += 1
        write_snapshot(root, pin, step)
        git(root, "commit", "-q", "-am", f"port to vllm {pin}")
    git(root, "checkout", "-q", "main")
    write_snapshot(root, PINS[-1], step + 1)  # a dirty work tree


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
    args = parser.parse_args()
    settings = Settings(pin_sources=(PinSource("requirement", extra="vllm"),))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "plugin"
        started = time.perf_counter()
        build_repo(root, args.commits_between)
        print(
            f"synthetic repo: {len(PINS) * (args.commits_between + 1) + len(BRANCH_PINS)} commits, "
            f"{FILES} files x {LINES_PER_FILE} lines, built in {time.perf_counter() - started:.1f} s"
        )
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            ledger = build_ledger(root, settings, probes())
            times.append(time.perf_counter() - started)
        assert len(ledger.columns) == len(PINS) + len(BRANCH_PINS), ledger.pins
        assert len(ledger.rows) == FILES * PROBES_PER_FILE
        print(
            f"ledger: {len(ledger.columns)} pins x {len(ledger.rows)} probes, {len(ledger.flags)} flags"
        )
        print(
            f"build_ledger: first {times[0]:.3f} s, best {min(times):.3f} s "
            f"(target <= {TARGET_SECONDS:.0f} s): {'OK' if max(times) <= TARGET_SECONDS else 'SLOW'}"
        )


if __name__ == "__main__":
    main()
