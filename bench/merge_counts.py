"""Merge proposals on a real rebase: how many copies merge cleanly, conflict, or did not change upstream.

    python bench/merge_counts.py [--dist arctic-inference] [--plugin 0.3.0] [--old 0.26.0] [--new 0.33.0]
                                 [--no-history] [--no-verify] [--write DIR] [--floor]

Indexes the three trees (warm index cache after the first run), runs the scan with every
registered check plus the fork, mirror and copied-line checks, then `run_port` (every
three-way merge from each copy's origin release, the statement/token retries, then the
verification re-scan of every clean proposal). The bar is a ratio to a floor measured in the same
run on the same copies: one `git merge-file` and one `ast.parse` of each of the three sides (the
plugin's copy, its merge base, upstream NEW) of every copy the port merged, best of three. The
merges (the line merge, the statement/token retries, renames) cost at most MERGE_BAR x that floor;
so the bar grows with the copies and their size (11 on arctic-inference, 170 on vllm-ascend) and
with the machine's load, as the floor does. Verification is one more scan, reported apart. `--dist`
chooses another plugin;
`--no-history` merges from OLD as before (no origin search); `--floor` also times plain
`ast.parse` of every file, the core speed bar's unit.
Prints one JSON line last; exit 1 when the merges miss the bar.
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
from pinport.port.merge import merge3
from pinport.port.plan import PortItem
from pinport.scan import load_models, scan_models
from pinport.sources import Cache, cached_releases, fetch_release

# the merges' seconds per second of the floor (see merge_floor); measured 2026-12-02 on a shared machine:
# arctic-inference 0.3.0 20-22 x (8 merged copies, large forks the finer merges retry), vllm-ascend 9 x (82)
MERGE_BAR = 30.0


def merge_floor(items: tuple[PortItem, ...], repeat: int = 3) -> tuple[float, int]:
    """(seconds, copies): one `git merge-file` and one `ast.parse` of each side of every copy the
    port merged, best of `repeat`: the least any three-way merge of these copies costs."""
    sides = [(i.copy.ours, i.origin.text if i.origin is not None and i.origin.lags else i.copy.base,
              i.copy.theirs) for i in items if i.merge is not None and i.copy.theirs is not None]
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        for ours, base, theirs in sides:
            merge3(ours, base, theirs)
            for text in (ours, base, theirs):
                try:
                    ast.parse(text)
                except SyntaxError:
                    pass  # a fragment the statement merge does not parse either
        best = min(best, time.perf_counter() - started)
    return (best if sides else 0.0), len(sides)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dist", default="arctic-inference", help="the plugin's distribution")
    parser.add_argument("--plugin", default="0.3.0", help="its release")
    parser.add_argument("--old", default="0.26.0")
    parser.add_argument("--new", default="0.33.0")
    parser.add_argument("--write", type=Path, help="also write the proposals to this directory")
    parser.add_argument("--floor", action="store_true", help="also time ast.parse of every file")
    parser.add_argument("--no-history", action="store_true", help="merge from OLD, not from each copy's origin")
    parser.add_argument("--no-verify", action="store_true", help="skip the verification re-scan (the bar is the merges')")
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
        report = run_port(models, settings, write_dir=args.write, findings=result.findings, verify=not args.no_verify)
        ported = time.perf_counter()
    except PinportError as exc:
        print(f"merge_counts: error: {exc}", file=sys.stderr)
        return 2
    print(render_port(report, diffs=False), end="")
    floor_s, merged = merge_floor(report.items)
    ratio = report.timings["merge"] / floor_s if floor_s else 0.0
    out = {
        "plugin": args.plugin, "old": args.old, "new": args.new, **report.counts(),
        "copies": len(report.items), "conflict_blocks": report.conflicts,
        "line_conflict_blocks": report.line_conflicts,
        "lagging_copies": sum(1 for i in report.items if i.origin is not None and i.origin.lags),
        "findings": {code: sum(1 for f in result.findings if f.code == code)
                     for code in sorted({f.code for f in result.findings if f.kind.check in {m.name for m in mine}})},
        "index_s": round(indexed - started, 3), "scan_s": round(scanned - indexed, 3),
        "port_s": round(ported - scanned, 3), "merge_s": round(report.timings["merge"], 3),
        "verify_s": round(report.timings["verify"], 3), "merged_copies": merged,
        "merge_floor_s": round(floor_s, 3), "merge_ratio": round(ratio, 2), "merge_bar_ratio": MERGE_BAR,
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
          f"merge {out['merge_s']} s = {out['merge_ratio']} x the floor ({out['merge_floor_s']} s for "
          f"{merged} merged copies; bar {MERGE_BAR} x), verify {out['verify_s']} s")
    print(json.dumps(out))
    return 0 if ratio <= MERGE_BAR else 1


if __name__ == "__main__":
    sys.exit(main())
