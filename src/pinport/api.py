"""The Python API: `pinport.scan(...)` does what `pinport scan` does, and returns the ScanResult.

    import pinport
    result = pinport.scan("./ArcticInference", new="0.33.0")            # OLD from the plugin's pin
    for f in result.findings:
        print(f.code, f.level, f.status, f.plugin, f.message)
    print(pinport.render(result, "sarif"))

Sources are specs as on the command line (a directory, REPO@REF, NAME==VERSION, a host version,
'installed'); releases and the code index are cached in the user cache (or `cache_dir`), shared
with the CLI, so a second scan of the same inputs reads them instead of fetching and parsing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from .accept import Baseline
from .cli.inputs import resolve_inputs
from .config import Settings, with_code_flags
from .findings import ScanResult
from .scan import Models, scan_models
from .sources.progress import ProgressFn, no_progress


@dataclass(frozen=True)
class ScanRun:
    """A scan with what produced it: the result, the loaded models and the settings used."""

    result: ScanResult
    models: Models
    settings: Settings


def run_scan(plugin: str | Path | None = None, *, old: str | Path | None = None, new: str | Path | None = None,
             cache_dir: str | Path | None = None, profile: str | None = None, host: str | None = None,
             checks: tuple[str, ...] = (), select: tuple[str, ...] = (), extend_select: tuple[str, ...] = (),
             ignore: tuple[str, ...] = (), per_file_ignores: tuple[str, ...] = (),
             baseline: str | Path | None = None, show_fixed: bool = False, verify_cache: bool = False,
             progress: ProgressFn = no_progress) -> ScanRun:
    """`scan`, keeping the models (the CLI renders HTML excerpts and port proposals from them)."""
    accepted = Baseline.read(Path(baseline)) if baseline is not None else None
    inputs = resolve_inputs(plugin_spec=str(plugin) if plugin is not None else None,
                            old_spec=str(old) if old is not None else None,
                            new_spec=str(new) if new is not None else None, old_tree=None, new_tree=None,
                            profile=profile, host=host, cache_dir=Path(cache_dir) if cache_dir else None,
                            progress=progress, verify_cache=verify_cache)
    models = inputs.load_models(progress)
    settings = with_code_flags(inputs.settings, select=select, extend_select=extend_select, ignore=ignore,
                               per_file_ignores=per_file_ignores)
    result = scan_models(models, settings, checks=checks)
    if accepted is not None:
        result = accepted.apply(result)
    if not show_fixed:
        result = replace(result, fixed=())
    return ScanRun(result, models, settings)


def scan(plugin: str | Path | None = None, *, old: str | Path | None = None, new: str | Path | None = None,
         cache_dir: str | Path | None = None, profile: str | None = None, host: str | None = None,
         checks: tuple[str, ...] = (), select: tuple[str, ...] = (), extend_select: tuple[str, ...] = (),
         ignore: tuple[str, ...] = (), per_file_ignores: tuple[str, ...] = (),
         baseline: str | Path | None = None, show_fixed: bool = False, verify_cache: bool = False,
         progress: ProgressFn = no_progress) -> ScanResult:
    """Scan `plugin` against host `old` and `new`, as `pinport scan` does; no argument: the default job.

    `old` defaults to the plugin's own pin, `new` to the newest release. `select`, `ignore`, ... are
    codes or prefixes as in `[tool.pinport]` (added to the plugin's settings; `select` replaces),
    `per_file_ignores` entries are "GLOB:CODES", `baseline` a file from `--write-baseline`;
    `verify_cache` hashes every cached file instead of trusting unchanged sizes and times.
    Raises pinport.errors.PinportError (one line of text) for bad input.
    """
    return run_scan(plugin, old=old, new=new, cache_dir=cache_dir, profile=profile, host=host, checks=checks,
                    select=select, extend_select=extend_select, ignore=ignore, per_file_ignores=per_file_ignores,
                    baseline=baseline, show_fixed=show_fixed, verify_cache=verify_cache, progress=progress).result
