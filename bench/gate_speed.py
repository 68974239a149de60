"""Gate speed: `pinport gate` for arctic-inference 0.3.0 on vLLM 0.33.0 with a cached env, vs a floor.

    python bench/gate_speed.py [--plugin 0.3.0] [--new 0.33.0] [--repeat 2] [--fresh-env]

The floor is measured in the same run, in the same environment: a plain `import <host>` plus
`import` of every plugin module in one fresh interpreter (no stubs, stopping at nothing: each
module is tried once), which any gate has to pay. The gate itself is `run_gate` (compile, keep-going
imports, bootstrap, patch verification, switches, test collection); the static scan it joins is
timed apart. `--fresh-env` also times building the environment into an empty cache (several
minutes and about 9.4 GB; the disk is freed after). Target: gate <= 60 s with a cached env.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pinport.config import load_settings
from pinport.gate import make_env, run_gate
from pinport.model.index import IndexCache
from pinport.scan import load_models, scan_models
from pinport.sources import Cache, fetch_release

FLOOR = r"""
import importlib, json, os, sys, time
sys.dont_write_bytecode = True
os.environ.update(json.loads(sys.argv[3]))
sys.path.insert(0, sys.argv[1])
started = time.perf_counter()
importlib.import_module(sys.argv[2])
for name in json.loads(sys.argv[4]):
    try:
        importlib.import_module(name)
    except BaseException:
        pass
print(time.perf_counter() - started)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plugin", default="0.3.0")
    parser.add_argument("--new", default="0.33.0")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--fresh-env", action="store_true")
    args = parser.parse_args()
    cache = Cache()
    plugin = fetch_release("arctic-inference", args.plugin, cache=cache, prefer="sdist")
    settings = load_settings(plugin.project_root or plugin.root)
    old_version = "0.26.0"
    old = fetch_release("vllm", old_version, cache=cache, prefer="wheel", packages=("vllm",))
    new = fetch_release("vllm", args.new, cache=cache, prefer="wheel", packages=("vllm",))
    started = time.perf_counter()
    models = load_models(plugin, old, new, settings, cache=IndexCache.in_cache(cache))
    static = scan_models(models, settings)
    static_seconds = time.perf_counter() - started
    env = make_env(settings.host_dist, args.new, cache=cache)
    rows = {"static scan (warm)": static_seconds}
    floors, gates = [], []
    for _ in range(args.repeat):
        done = subprocess.run([str(env.python), "-c", FLOOR, str(plugin.root), settings.host,
                               json.dumps(dict(settings.gate.env)), json.dumps(models.plugin.modules)],
                              capture_output=True, text=True, check=True)
        floors.append(float(done.stdout.strip().splitlines()[-1]))
        result = run_gate(plugin.root, env, settings, models.plugin, static=static,
                          project_root=plugin.project_root)
        gates.append(result.seconds)
    rows["floor: import host + plugin modules"] = min(floors)
    rows["gate (cached env)"] = min(gates)
    if args.fresh_env:
        with tempfile.TemporaryDirectory(prefix="pinport-bench-env-") as tmp:
            started = time.perf_counter()
            make_env(settings.host_dist, args.new, cache=Cache(Path(tmp)))
            rows["env creation (empty cache)"] = time.perf_counter() - started
            shutil.rmtree(tmp, ignore_errors=True)
    floor = rows["floor: import host + plugin modules"]
    for name, seconds in rows.items():
        print(f"{name:<40} {seconds:8.1f} s  {seconds / floor:6.2f} x floor")
    print(f"gate target <= 60 s: {'met' if rows['gate (cached env)'] <= 60 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
