"""Speed bar for `pinport rebase`: the whole plan, and the stops alone, as ratios to one warm scan.

    python bench/rebase_speed.py [--plugin 0.3.0] [--old 0.26.0] [--new 0.33.0] [--repeat 2]

The floor is one warm `pinport scan` of the same job, measured in the same run. Each run is a
fresh interpreter with warm caches (releases downloaded, index filled); best of `--repeat`.
- rebase: `pinport rebase --plugin arctic-inference==P --new NEW` end to end, plan only (stops,
  pins, safe-fix plan, clean merges, the four documents); target <= 3 x the warm scan;
- stops: judging every release between OLD and NEW (0.26 -> 0.33: 7 releases); target <= 3 x.
  Warm, each release's findings are read back from the index cache (`scan.judged`); `stops_judged`
  is the same with every release judged afresh (no stored findings read), what a first rebase
  over new releases (or after an upgrade of pinport) pays.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

SCAN = r"""
import os, sys, time
from pinport.cli.main import main
plugin, old, new = sys.argv[1:4]
started = time.perf_counter()
main(["scan", "--plugin", f"arctic-inference=={plugin}", "--old", old, "--new", new, "--no-progress",
      "-o", os.devnull])
print(time.perf_counter() - started)
"""

REBASE = r"""
import sys, tempfile, time, contextlib, io
from pinport.cli.main import main
plugin, old, new = sys.argv[1:4]
out = tempfile.mkdtemp()
started = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    main(["rebase", "--plugin", f"arctic-inference=={plugin}", "--old", old, "--new", new, "--out", out,
          "--no-progress"])
print(time.perf_counter() - started)
"""

STOPS = r"""
import sys, time
import pinport.scan
from pinport.model.index import IndexCache
from pinport.rebase import RebaseOptions, run_rebase
from pinport.rebase.stops import find_stops
from pinport.sources import Cache
plugin, old, new, fresh = sys.argv[1:5]
rebase = run_rebase(RebaseOptions(f"arctic-inference=={plugin}", old_spec=old, new_spec=new, stops=False))
if fresh == "fresh":
    pinport.scan._read_stored = lambda *args: None  # every release judged, as before its findings were kept
cache = Cache()
started = time.perf_counter()
stops = find_stops(rebase, cache, IndexCache.in_cache(cache), lambda *a: None)
print(time.perf_counter() - started, len(stops.steps) - 1)
"""


def _run(code: str, args: list[str]) -> list[float]:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    return [float(x) for x in done.stdout.split()[-2:]] if code is STOPS else [float(done.stdout.split()[-1])]


def _stops(job: list[str], fresh: bool) -> list[float]:
    return _run(STOPS, [*job, "fresh" if fresh else "stored"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plugin", default="0.3.0")
    parser.add_argument("--old", default="0.26.0")
    parser.add_argument("--new", default="0.33.0")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    job = [args.plugin, args.old, args.new]
    load_before = os.getloadavg()[0]
    _run(REBASE, job)  # warm every cache once (releases between, summaries, corpora)
    best: dict[str, float] = {}
    releases = 0
    for _ in range(args.repeat):  # interleaved, so load on the machine hits all four alike
        best["scan"] = min(best.get("scan", 1e9), _run(SCAN, job)[0])
        best["rebase"] = min(best.get("rebase", 1e9), _run(REBASE, job)[0])
        seconds, releases = _stops(job, fresh=False)
        best["stops"] = min(best.get("stops", 1e9), seconds)
        best["stops_judged"] = min(best.get("stops_judged", 1e9), _stops(job, fresh=True)[0])
    floor = best["scan"]
    report = {"warm_scan_s": round(floor, 2), "rebase_s": round(best["rebase"], 2),
              "rebase_ratio": round(best["rebase"] / floor, 2), "stops_s": round(best["stops"], 2),
              "stops_ratio": round(best["stops"] / floor, 2), "stops_judged_s": round(best["stops_judged"], 2),
              "stops_judged_ratio": round(best["stops_judged"] / floor, 2), "intermediate_releases": int(releases),
              "load_average": [round(load_before, 1), round(os.getloadavg()[0], 1)],  # 1-minute, at start and end
              "targets": {"rebase_ratio": 3.0, "stops_ratio": 3.0, "stops_judged_ratio": 3.0}}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    tempfile.tempdir = None
    started = time.perf_counter()
    main()
    print(f"(bench took {time.perf_counter() - started:.0f}s)", file=sys.stderr)
