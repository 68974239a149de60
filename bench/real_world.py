"""Real-world benchmark: pinport on real plugin rebases, scored against what people did.

    python bench/real_world.py [--checks imports,signatures,...] [--plugin DIST] [--json FILE]

The plugins: ArcticInference (below) and the other vLLM plugins of tests/real/plugins.toml
(vllm-rbln, vllm-spyre, vllm-beam-search-plugin, vllm-ascend, vllm-omni, ...), each scanned with no settings.

For each consecutive pair of arctic-inference releases across a pin change (BEFORE pinned to
OLD, AFTER pinned to NEW), it scans BEFORE against OLD -> NEW and compares the plugin units
(functions, methods, module-level code) pinport flagged with the units the maintainers changed
between the two releases:

- recall    = flagged units that changed / units that changed (and touch the host)
- precision = flagged units that changed / flagged units
- after-pin = error/warning findings on AFTER scanned against its own pin (a false-positive proxy)

Releases mix rebases with feature work, so precision is a lower bound: a unit that was flagged
but left alone may still be broken (latent findings especially). Both are also given per check.

Precision proper comes from the hand-verified answer files of tests/real/answers/moves/: each
labels every error and warning of one real move true or false (read in the vLLM sources); the
job is scanned as `pinport scan` runs it and each check's true/labelled count is printed. The
other plugins' validated releases (tests/real/answers/<dist>-<version>.toml) are scanned on their
own pin and their error and warning precision printed the same way.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import sys
import time
import tomllib
from collections import Counter
from pathlib import Path

from pinport.config import load_settings
from pinport.findings import Severity
from pinport.model.index import IndexCache
from pinport.scan import host_history, load_models, scan_models
from pinport.sources import Cache, SourceTree, fetch_release
from pinport.sources.registry import cached_releases

OTHER_PLUGINS = Path(__file__).resolve().parent.parent / "tests" / "real" / "plugins.toml"
MOVES = Path(__file__).resolve().parent.parent / "tests" / "real" / "answers" / "moves"
OWN_PINS = MOVES.parent  # the other plugins' validated releases, each on its own pin
PAIRS = [  # arctic-inference: (before, after, before's pin, after's pin)
    ("0.0.4", "0.0.6", "0.8.1", "0.8.4"),
    ("0.0.7", "0.0.8", "0.8.4", "0.9.0.1"),
    ("0.0.8", "0.0.9", "0.9.0.1", "0.9.2"),
    ("0.0.9", "0.1.0", "0.9.2", "0.10.1"),
    ("0.1.1", "0.1.2", "0.10.1", "0.11.0"),
    ("0.1.2", "0.2.0", "0.11.0", "0.18.0"),
    ("0.2.0", "0.3.0", "0.18.0", "0.26.0"),
]


def unit_hashes(tree: SourceTree, package: str) -> dict[tuple[str, str], str]:
    """(file, qualified unit) -> hash of its normalised AST; '<module>' is the module-level code."""
    out: dict[tuple[str, str], str] = {}
    for rel in tree.files:
        if not rel.endswith(".py") or not rel.startswith(package + "/"):
            continue
        try:
            module = ast.parse(tree.read_text(rel))
        except SyntaxError:
            continue
        top: list[str] = []
        stack: list[tuple[list[ast.stmt], str]] = [(module.body, "")]
        while stack:
            body, prefix = stack.pop()
            for node in body:
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    out[(rel, prefix + node.name)] = hashlib.sha1(ast.dump(node).encode()).hexdigest()
                elif isinstance(node, ast.ClassDef):
                    stack.append((node.body, f"{prefix}{node.name}."))
                    out[(rel, prefix + node.name)] = hashlib.sha1(
                        ast.dump(ast.Module([s for s in node.body if not isinstance(
                            s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)], []))
                        .encode()).hexdigest()
                elif not prefix:
                    top.append(ast.dump(node))
        out[(rel, "<module>")] = hashlib.sha1("\n".join(top).encode()).hexdigest()
    return out


def per_check_units(findings, changed: set) -> dict[str, dict[str, object]]:
    """Recall and precision of each check alone against the units the maintainers changed."""
    out: dict[str, dict[str, object]] = {}
    for check in sorted({f.kind.check for f in findings}):
        flagged = {(f.plugin.path, f.plugin.unit) for f in findings if f.kind.check == check}
        hit = flagged & changed
        out[check] = {"flagged": len(flagged), "hit": len(hit),
                      "recall": round(len(hit) / len(changed), 3) if changed else None,
                      "precision": round(len(hit) / len(flagged), 3) if flagged else None}
    return out


def answered_precision(answer_file: Path, cache: Cache, index_cache: IndexCache, checks: tuple[str, ...]) -> dict:
    """Score one answered move: per check and severity, how many errors/warnings are labelled true."""
    answers = tomllib.loads(answer_file.read_text(encoding="utf-8"))
    labels = {entry["fingerprint"]: entry["verdict"] for entry in answers["finding"]}
    plugin = fetch_release(answers["plugin"], answers["version"], cache=cache, prefer="sdist")
    settings = load_settings(plugin.project_root or plugin.root)
    trees = [fetch_release(settings.host_dist, v, cache=cache, prefer="wheel", packages=(settings.host,))
             for v in (answers["old"], answers["new"])]
    history = tuple(cached_releases(settings.host_dist, cache=cache, below=answers["old"],
                                    packages=(settings.host,)))
    models = load_models(plugin, *trees, settings, cache=index_cache, history=history)
    result = scan_models(models, settings, checks=checks)
    table: dict[str, dict[str, list[int]]] = {}
    unlabelled = 0
    for f in result.findings:
        if f.level is Severity.INFO:
            continue
        if f.fingerprint not in labels:
            unlabelled += 1
            continue
        cell = table.setdefault(f.kind.check, {}).setdefault(f.level.value, [0, 0])
        cell[0] += bool(labels[f.fingerprint])
        cell[1] += 1
    return {"move": f"{answers['plugin']} {answers['version']}: {answers['old']} -> {answers['new']}",
            "by_check": dict(sorted(table.items())), "unlabelled": unlabelled}


def own_pin_precision(answer_file: Path, cache: Cache, index_cache: IndexCache, checks: tuple[str, ...]) -> dict:
    """Score one validated release on its own pin (tests/real/answers/<dist>-<version>.toml): how many of
    its errors and warnings are labelled true (a real break / a host path reaching the mismatch)."""
    answers = tomllib.loads(answer_file.read_text(encoding="utf-8"))
    labels: dict[tuple[str, str], bool] = {}  # (code, plugin file:line): a label answers its own codes only
    for entry in (*answers.get("finding", ()), *answers.get("warning", ())):
        for code in (entry["code"], *entry.get("also_codes", ())):
            for where in (entry["plugin"], *entry.get("also", ())):
                labels[(code, where)] = bool(entry["verdict"])
    plugin = fetch_release(answers["plugin"], answers["version"], cache=cache, prefer="sdist")
    settings = load_settings(plugin.project_root or plugin.root)
    host = fetch_release(settings.host_dist, answers["host"], cache=cache, prefer="wheel", packages=(settings.host,))
    models = load_models(plugin, host, host, settings, cache=index_cache, history=host_history(host, settings, cache))
    result = scan_models(models, settings, checks=checks)
    cells = {"error": [0, 0], "warning": [0, 0]}
    unlabelled = 0
    for f in result.findings:
        if f.level is Severity.INFO or not f.plugin:
            continue
        where = (f.code, f"{f.plugin.path}:{f.plugin.line}")
        if where not in labels:
            unlabelled += 1
            continue
        cells[f.level.value][0] += labels[where]
        cells[f.level.value][1] += 1
    return {"release": f"{answers['plugin']} {answers['version']} on vLLM {answers['host']}", **cells,
            "unlabelled": unlabelled}


def _ratio(cells) -> str:
    true, total = (sum(c[0] for c in cells), sum(c[1] for c in cells))
    return f"{true}/{total}" + (f" ({true / total:.0%})" if total else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checks", default="", help="comma-separated checks (default: all)")
    parser.add_argument("--json", type=Path, help="also write the numbers as JSON")
    parser.add_argument("--plugin", default="", help="only this distribution's pairs")
    parser.add_argument("--answers-only", action="store_true", help="only the answered moves' precision")
    args = parser.parse_args()
    jobs = [("arctic-inference", *pair) for pair in PAIRS]
    for dist, spec in tomllib.loads(OTHER_PLUGINS.read_text(encoding="utf-8")).items():
        jobs += [(dist, *pair) for pair in spec["pairs"]]
    if args.plugin:
        jobs = [job for job in jobs if job[0] == args.plugin]
    if args.answers_only:
        jobs = []
    checks = tuple(c for c in args.checks.split(",") if c)
    cache = Cache()
    index_cache = IndexCache.in_cache(cache)
    rows = []
    for dist, before, after, old, new in jobs:
        started = time.perf_counter()
        plugin_before = fetch_release(dist, before, cache=cache, prefer="sdist")
        plugin_after = fetch_release(dist, after, cache=cache, prefer="sdist")
        host_old = fetch_release("vllm", old, cache=cache, prefer="wheel", packages=("vllm",))
        host_new = fetch_release("vllm", new, cache=cache, prefer="wheel", packages=("vllm",))
        settings = load_settings(plugin_before.project_root or plugin_before.root)
        models = load_models(plugin_before, host_old, host_new, settings, cache=index_cache)
        result = scan_models(models, settings, checks=checks)
        serious = [f for f in result.findings if f.level is not Severity.INFO and f.plugin]
        scanned = set(models.plugin.modules)
        package = models.plugin.package
        files = {models.plugin.index.paths[m] for m in scanned}
        h_before = {k: v for k, v in unit_hashes(plugin_before, package).items() if k[0] in files}
        h_after = unit_hashes(plugin_after, package)
        changed = {k for k, v in h_before.items() if h_after.get(k) != v}
        # a finding in a method flags the method; module-level findings flag '<module>'
        flagged = {(f.plugin.path, f.plugin.unit) for f in serious}
        hit = flagged & changed
        units_by_check = per_check_units(serious, changed)
        after_settings = load_settings(plugin_after.project_root or plugin_after.root)
        after_models = load_models(plugin_after, host_new, host_new, after_settings, cache=index_cache)
        after_result = scan_models(after_models, after_settings, checks=checks)
        after_serious = [f for f in after_result.findings if f.level is not Severity.INFO]
        rows.append({
            "plugin": dist, "pair": f"{before} -> {after}", "pins": f"{old} -> {new}",
            "findings": len(result.findings), "errors": result.count(Severity.ERROR),
            "warnings": result.count(Severity.WARNING),
            "by_check": dict(sorted(Counter(f.kind.check for f in result.findings).items())),
            "drift": sum(1 for f in result.findings if f.status.value == "drift"),
            "latent": sum(1 for f in result.findings if f.status.value == "latent"),
            "changed_units": len(changed), "flagged_units": len(flagged), "flagged_and_changed": len(hit),
            "recall": round(len(hit) / len(changed), 3) if changed else None,
            "precision": round(len(hit) / len(flagged), 3) if flagged else None,
            "units_by_check": units_by_check,
            "after_on_own_pin": len(after_serious),
            "after_errors_on_own_pin": sum(1 for f in after_serious if f.level is Severity.ERROR),
            "seconds": round(time.perf_counter() - started, 1),
        })
        row = rows[-1]
        print(f"{dist:<24} {row['pair']:<15} {row['pins']:<17} findings {row['findings']:>3} (E{row['errors']} "
              f"W{row['warnings']})  changed {row['changed_units']:>3} flagged {row['flagged_units']:>3} "
              f"hit {row['flagged_and_changed']:>3}  recall {row['recall']}  precision {row['precision']}  "
              f"after-on-own-pin {row['after_on_own_pin']} (E{row['after_errors_on_own_pin']})  "
              f"{row['seconds']}s", flush=True)
        print("    per check (hit/flagged, recall): " + ", ".join(
            f"{c} {v['hit']}/{v['flagged']} {v['recall']}" for c, v in units_by_check.items()), flush=True)
    answered = [] if args.plugin else [answered_precision(path, cache, index_cache, checks)
                                       for path in sorted(MOVES.glob("*.toml"))]
    for move in answered:
        cells = move["by_check"]
        print(f"\nprecision from the answer file, {move['move']} (unlabelled: {move['unlabelled']}):")
        print(f"    errors {_ratio([v['error'] for v in cells.values() if 'error' in v])}  "
              f"warnings {_ratio([v['warning'] for v in cells.values() if 'warning' in v])}")
        for check, by_level in cells.items():
            print(f"    {check:<14} " + "  ".join(f"{level} {_ratio([cell])}" for level, cell in sorted(by_level.items())))
    own_pins = [own_pin_precision(path, cache, index_cache, checks) for path in sorted(OWN_PINS.glob("*.toml"))
                if not args.plugin or path.name.startswith(args.plugin + "-")]
    if own_pins:
        print("\nprecision on their own pin, the other plugins' validated releases (answer files):")
    for row in own_pins:
        print(f"    {row['release']:<44} errors {_ratio([row['error']])}  warnings {_ratio([row['warning']])}  "
              f"unlabelled {row['unlabelled']}")
    if args.json:
        args.json.write_text(json.dumps({"pairs": rows, "answered": answered, "own_pins": own_pins}, indent=2) + "\n",
                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
