"""Speed bar: cold and warm `pinport scan` as a ratio to plain `ast.parse` of the same files.

    python bench/speed.py [--plugin 0.3.0] [--old 0.26.0] [--new 0.33.0] [--repeat 3]
    python bench/speed.py --plugin vllm-rbln==0.11.2 --old 0.24.0 --new 0.30.0   # another plugin

The floor is measured in the same run: one process parsing every .py file of the plugin and
both host trees with `ast.parse`, sequentially. "Cold" scans with an empty index cache (the
release downloads are cached and excluded); "warm" scans again with that cache filled. Each
measurement runs in a fresh interpreter, so peak memory (max RSS) is that scan's own.
Targets (issue 2): cold <= 1.0 x floor, warm <= 0.2 x floor, peak memory <= 1.5 GiB.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
started = time.perf_counter()
from pinport.config import load_settings
from pinport.model.index import IndexCache
from pinport.scan import scan
from pinport.sources import Cache, fetch_release
dist, plugin_version, old, new, index_path = sys.argv[1:6]
cache = Cache()
plugin = fetch_release(dist, plugin_version, cache=cache, prefer="sdist")
trees = [fetch_release("vllm", v, cache=cache, prefer="wheel", packages=("vllm",)) for v in (old, new)]
settings = load_settings(plugin.project_root or plugin.root)
loaded = time.perf_counter()
result = scan(plugin, trees[0], trees[1], settings, cache=IndexCache(Path(index_path)))
done = time.perf_counter()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
print(json.dumps({"total": done - started, "scan": done - loaded, "findings": len(result.findings),
                  "peak_bytes": max(peak, children)}))
"""

FLOOR = r"""
import ast, json, sys, time
from pathlib import Path
from pinport.sources import Cache, fetch_release
dist, plugin_version, old, new = sys.argv[1:5]
cache = Cache()
trees = [fetch_release(dist, plugin_version, cache=cache, prefer="sdist")]
trees += [fetch_release("vllm", v, cache=cache, prefer="wheel", packages=("vllm",)) for v in (old, new)]
sources = [(t.root / rel).read_bytes() for t in trees for rel in t.files if rel.endswith(".py")]
started = time.perf_counter()
for source in sources:
    ast.parse(source)
print(json.dumps({"floor": time.perf_counter() - started, "files": len(sources)}))
"""


def _child(code: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plugin", default="0.3.0", help="an arctic-inference version, or DIST==VERSION")
    parser.add_argument("--old", default="0.26.0")
    parser.add_argument("--new", default="0.33.0")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    dist, _, version = args.plugin.rpartition("==")
    versions = (dist or "arctic-inference", version, args.old, args.new)
    floors, colds, warms = [], [], []
    for _ in range(args.repeat):
        floor = _child(FLOOR, *versions)
        floors.append(floor["floor"])
        with tempfile.TemporaryDirectory() as tmp:
            index = str(Path(tmp) / "index.sqlite")
            colds.append(_child(CHILD, *versions, index))
            warms.append(_child(CHILD, *versions, index))
    floor_s = min(floors)
    cold = min(colds, key=lambda r: r["total"])
    warm = min(warms, key=lambda r: r["total"])
    peak = max(r["peak_bytes"] for r in colds + warms)
    report = {
        "inputs": f"{versions[0]} {versions[1]} vs vLLM {args.old} -> {args.new}",
        "files": floor["files"],
        "floor_parse_s": round(floor_s, 3),
        "cold_s": round(cold["total"], 3), "cold_ratio": round(cold["total"] / floor_s, 3),
        "warm_s": round(warm["total"], 3), "warm_ratio": round(warm["total"] / floor_s, 3),
        "peak_memory_mib": round(peak / 2**20, 1),
        "findings": cold["findings"],
        "measured_at": time.strftime("%Y-%m-%d %H:%M"),
    }
    print(json.dumps(report, indent=2))
    ok = report["cold_ratio"] <= 1.0 and report["warm_ratio"] <= 0.2 and report["peak_memory_mib"] <= 1536
    print("bar:", "met" if ok else "NOT met (cold <= 1.0, warm <= 0.2, memory <= 1536 MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
