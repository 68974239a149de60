"""Merge proposals on a real rebase: how many copies merge cleanly, conflict, or did not change upstream.

    python bench/merge_counts.py [--dist arctic-inference] [--plugin 0.3.0] [--old 0.26.0] [--new 0.33.0]
                                 [--no-history] [--write DIR] [--floor]

Indexes the three trees (warm index cache after the first run), runs the scan with every
registered check plus the fork, mirror and copied-line checks, then `run_port` (every
three-way merge from each copy's origin release, the statement/token retries, then the
verification re-scan of every clean proposal). The bar: the merges cost at most 5 s on top of the
scan (verification is one more scan, reported apart). `--dist` chooses another plugin;
`--no-history` merges from OLD as before (no origin search); `--floor` also times plain
`ast.parse` of every file, the core speed bar's unit.
Prints one JSON line last; exit 1 when the port misses the bar.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
import time
from pathlib import Path

from pinport.checks import CHECKS
from pinport.checks.copied_lines import CopiedLinesCheck
from pinport.checks.forks import ForksCheck
from pinport.checks.mirrors import MirrorsCheck
from pinport.config import load_settings
from pinport.errors import PinportError
from pinport.model.index import IndexCache
from pinport.port import render_port, run_port
from pinport.scan import load_models, scan_models
from pinport.sources import Cache, cached_releases, fetch_release

PORT_BAR = 5.0  # seconds on top of the scan


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dist", default="arctic-inference", help="the plugin's distribution")
    parser.add_argument("--plugin", default="0.3.0", help="its release")
    parser.add_argument("--old", default="0.26.0")
    parser.add_argument("--new", default="0.33.0")
    parser.add_argument("--write", type=Path, help="also write the proposals to this directory")
    parser.add_argument("--floor", action="store_true", help="also time ast.parse of every file")
    parser.add_argument("--no-history", action="store_true", help="merge from OLD, not from each copy's origin")
    args = parser.parse_args()
    cache = Cache()
    try:
        plugin = fetch_release(args.dist, args.plugin, cache=cache, prefer="sdist")
        old, new = (fetch_release("vllm", v, cache=cache, prefer="wheel", packages=("vllm",))
                    for v in (args.old, args.new))
        settings = load_settings(plugin.project_root or plugin.root)
        started = time.perf_counter()
        history = () if args.no_history else tuple(cached_releases("vllm", cache=cache, below=args.old,
                                                                    packages=("vllm",)))
        models = load_models(plugin, old, new, settings, cache=IndexCache.in_cache(cache), history=history)
        indexed = time.perf_counter()
        mine = (ForksCheck(), MirrorsCheck(), CopiedLinesCheck())
        checks = tuple(c for c in CHECKS if c.name not in {m.name for m in mine}) + mine
        result = scan_models(models, settings, extra_checks=checks)
        scanned = time.perf_counter()
        report = run_port(models, settings, write_dir=args.write, findings=result.findings)
        ported = time.perf_counter()
    except PinportError as exc:
        print(f"merge_counts: error: {exc}", file=sys.stderr)
        return 2
    print(render_port(report, diffs=False), end="")
    out = {
        "plugin": args.plugin, "old": args.old, "new": args.new, **report.counts(),
        "copies": len(report.items), "conflict_blocks": report.conflicts,
        "line_conflict_blocks": report.line_conflicts,
        "lagging_copies": sum(1 for i in report.items if i.origin is not None and i.origin.lags),
        "findings": {code: sum(1 for f in result.findings if f.code == code)
                     for code in sorted({f.code for f in result.findings if f.kind.check in {m.name for m in mine}})},
        "index_s": round(indexed - started, 3), "scan_s": round(scanned - indexed, 3),
        "port_s": round(ported - scanned, 3), "merge_s": round(report.timings["merge"], 3),
        "verify_s": round(report.timings["verify"], 3), "port_bar_s": PORT_BAR,
    }
    if args.floor:
        trees = (plugin, old, new)
        sources = [(t.root / rel).read_bytes() for t in trees for rel in t.files if rel.endswith(".py")]
        floor_started = time.perf_counter()
        for source in sources:
            ast.parse(source)
        out["floor_s"] = round(time.perf_counter() - floor_started, 3)
    lagging = f", {out['lagging_copies']} lagging" if not args.no_history else ""
    print(f"{args.dist} {args.plugin}, vllm {args.old} -> {args.new} (merged from "
          f"{'OLD' if args.no_history else 'each copy origin'}): {out['copies']} copies{lagging}, "
          f"{out['clean']} clean merges ({out['verified']} verified, {out['unverified']} failing verification), "
          f"conflict blocks {out['line_conflict_blocks']} -> {out['conflict_blocks']}, "
          f"merge {out['merge_s']} s, verify {out['verify_s']} s")
    print(json.dumps(out))
    return 0 if out["merge_s"] <= PORT_BAR else 1


if __name__ == "__main__":
    sys.exit(main())
