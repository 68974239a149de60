"""Run the gate: the plugin imported, bootstrapped and its patches verified in a real host environment.

Everything the plugin or host runs happens in subprocesses of the environment's interpreter
(`runner.py` and `collect.py`, passed by path); this process only builds the job from the
static model, reads the results back as JSON and joins them with the static findings.
"""

from __future__ import annotations

import ast
import configparser
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..config import Settings
from ..findings import Finding, Location, ScanResult, Severity, Status
from ..model.summary import BindingKind
from ..plugin.model import PluginModel
from ..plugin.records import Patch, PatchKind
from .env import EnvError, GateEnv
from .findings import (
    BOOTSTRAP_FAILED,
    COLLECTION_ERROR,
    COMPILE_ERROR,
    KINDS,
    PATCH_NOT_APPLIED,
    SELECTION,
    break_finding,
    join,
    stub_findings,
)

_HERE = Path(__file__).resolve().parent
Log = Callable[[str], None]


@dataclass(frozen=True)
class GateStep:
    """One step of the gate: PASS (True), FAIL (False) or could not run (None), with its evidence."""

    name: str
    passed: bool | None
    summary: str
    evidence: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return {True: "PASS", False: "FAIL", None: "SKIP"}[self.passed]


@dataclass(frozen=True)
class PatchCheck:
    """What the gate saw of one patch after the bootstrap."""

    patch: Patch
    status: str  # applied | not-applied | target-missing | unverified
    detail: str = ""


@dataclass(frozen=True)
class GateResult:
    """Everything one gate run produced; `report` holds the static and dynamic findings, joined."""

    env: GateEnv
    steps: tuple[GateStep, ...]
    report: ScanResult
    patches: tuple[PatchCheck, ...] = ()
    patch_classes: tuple[int, int] = (0, 0)  # (applied fully, total)
    stubbed: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return any(step.passed is False for step in self.steps)

    @property
    def findings(self) -> tuple[Finding, ...]:
        """The gate's own findings (those of its codes), without the static ones."""
        codes = {k.code for k in KINDS}
        return tuple(f for f in self.report.findings if f.code in codes)


# -- the plugin's bootstrap ----------------------------------------------------------------------
def gate_entry_point(settings: Settings, project_root: Path | None) -> str:
    """What the gate runs to bootstrap the plugin: the `entry-point` setting, else the plugin's entry
    point in `entry-point-group`, else in the host's general plugins' group (the first of the host
    profile's `plugin-groups`); '' when there is none."""
    group = settings.gate.entry_point_group or next(iter(settings.plugin_groups), "")
    return settings.gate.entry_point or (find_entry_point(project_root, group) if group else "")


def find_entry_point(project_root: Path | None, group: str) -> str:
    """The plugin's registered function in `group` ("module:function"), read from its metadata files."""
    if project_root is None:
        return ""
    pyproject = project_root / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            data = {}
        table = data.get("project", {}).get("entry-points", {}).get(group, {})
        if isinstance(table, dict) and table:
            return str(next(iter(table.values())))
    setup_cfg = project_root / "setup.cfg"
    if setup_cfg.is_file():
        parser = configparser.ConfigParser()
        try:
            parser.read(setup_cfg, encoding="utf-8")
            for line in parser.get("options.entry_points", group, fallback="").splitlines():
                if "=" in line:
                    return line.split("=", 1)[1].strip()
        except configparser.Error:
            pass
    setup_py = project_root / "setup.py"
    if setup_py.is_file():
        return _setup_py_entry_point(setup_py, group)
    return ""


def _setup_py_entry_point(path: Path, group: str) -> str:
    """`entry_points={group: ["name = mod:func"]}` in a setup() call, read by parsing (never run)."""
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        return ""
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == group and isinstance(value, ast.List | ast.Tuple):
                    for item in value.elts:
                        if isinstance(item, ast.Constant) and isinstance(item.value, str) and "=" in item.value:
                            return item.value.split("=", 1)[1].strip()
    return ""


# -- the job for runner.py -----------------------------------------------------------------------
def _applied_patches(plugin: PluginModel) -> list[Patch]:
    """Patches a bootstrap applies: patch-class members, and assignments of a named function or class.

    A value assigned inside a function (`parallel_state._TP = group`) is state the plugin sets
    while it runs, not a patch the bootstrap applies; it is not checked.
    """
    out = []
    for p in plugin.surface.patches:
        if p.kind is PatchKind.MEMBER or p.kind is PatchKind.ASSIGNMENT and (
                p.function is not None or _defines(plugin, p.plugin_module, _assigned_name(p.site.snippet))):
            out.append(p)
    return out


def _defines(plugin: PluginModel, module: str, name: str) -> bool:
    """Whether `name` is a function or class of the plugin module (defined or imported there)."""
    summary = plugin.index.modules.get(module)
    binding = summary.bindings.get(name) if summary is not None and name else None
    return binding is not None and binding.kind in (BindingKind.FUNCTION, BindingKind.CLASS,
                                                    BindingKind.IMPORT_FROM)


def _patch_job(i: int, patch: Patch) -> dict:
    if patch.kind is PatchKind.MEMBER:
        qualname = f"{patch.via}.{patch.name}"
    elif patch.function is not None:
        qualname = patch.function.name
    else:
        qualname = _assigned_name(patch.site.snippet)
    fn = patch.function
    return {"id": i, "owner": patch.owner, "name": patch.name, "module": patch.plugin_module,
            "qualname": qualname, "path": patch.site.path, "line": fn.line if fn else patch.site.line,
            "end_line": fn.end_line if fn else patch.site.line}


def _assigned_name(line: str) -> str:
    """The plain name on the right of `Target.attr = name` (a class, say), from the statement's line."""
    try:
        node = ast.parse(line.strip()).body[0]
    except (SyntaxError, IndexError):
        return ""
    value = node.value if isinstance(node, ast.Assign) else None
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and len(node.value.args) == 3:
        value = node.value.args[2]  # setattr(Target, "attr", name)
    return value.id if isinstance(value, ast.Name) else ""


def _selection_jobs(static: ScanResult | None, prefix: str) -> list[dict]:
    """The selection sites the bypass check found at NEW, to evaluate against the environment (with
    the host's flags, spelt `prefix`, the switch reads)."""
    if static is None:
        return []
    jobs = []
    for f in static.findings:
        if f.kind.check != "bypass" or f.new is None or not f.new.path.endswith(".py"):
            continue
        module = f.new.path[:-3].replace("/", ".").removesuffix(".__init__")
        # the host's flags NEW's switch reads (the bypass check's data, not its wording)
        variables = [v for v in f.extra.get("flags", ()) if v.startswith(prefix)]  # type: ignore[attr-defined]
        jobs.append({"id": len(jobs), "module": module, "path": f.new.path, "line": f.new.line,
                     "candidate": f.subject, "target": f.args.get("name", ""), "env_vars": variables})
    return jobs


def _run_json(command: list[str], job: dict | None, timeout: float, cwd: Path, env: dict[str, str],
              plugin_root: Path | None = None) -> tuple[dict | None, str]:
    """Run one gate subprocess; its JSON result (or None) and the tail of what it printed.

    With a job, the command gets `JOB.json OUT.json`; without one it is the collection run, which
    loads `collect.py` (copied alone into a fresh directory) and finds `plugin_root` on its path.
    """
    with tempfile.TemporaryDirectory(prefix="pinport-gate-") as tmp:
        out = Path(tmp) / "result.json"
        args = list(command)
        if job is not None:
            (Path(tmp) / "job.json").write_text(json.dumps(job), encoding="utf-8")
            args += [str(Path(tmp) / "job.json"), str(out)]
        else:
            shutil.copy(_HERE / "collect.py", Path(tmp) / "_pinport_gate_collect.py")
            env = {**env, "PINPORT_GATE_COLLECT_OUT": str(out),
                   "PYTHONPATH": os.pathsep.join([tmp, str(plugin_root)])}
        try:
            done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                                  check=False)
        except subprocess.TimeoutExpired:
            return None, f"timed out after {timeout:.0f}s"
        except OSError as exc:
            return None, f"cannot run {args[0]}: {exc.strerror}"
        tail = "\n".join((done.stderr.strip().splitlines() or done.stdout.strip().splitlines())[-6:])
        if not out.is_file():
            return None, tail or f"exit status {done.returncode}"
        try:
            return json.loads(out.read_text(encoding="utf-8")), tail
        except ValueError:
            return None, "unreadable result"


def _subprocess_env(settings: Settings) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(dict(settings.gate.env))
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # nothing written into the plugin tree
    return env


# -- the run -------------------------------------------------------------------------------------
def run_gate(plugin_root: Path, env: GateEnv, settings: Settings, plugin: PluginModel, *,
             static: ScanResult | None = None, project_root: Path | None = None,
             new_label: str = "", log: Log = lambda line: None) -> GateResult:
    """The whole gate in the interpreter `env.python`.

    Args:
        plugin_root: the directory that holds the plugin package (put first on sys.path there).
        env: the environment (see `make_env` / `use_python`).
        settings: the plugin's settings (`gate` table: env, stub, entry-point, tests).
        plugin: the plugin's static model (its modules and the patches discovery found).
        static: the static scan against the same NEW; its findings are joined with the gate's.
        project_root: where pyproject.toml / setup.py and the tests live (default: plugin_root).
        new_label: how NEW is named in findings (default: the host and the version installed).
    """
    started = time.perf_counter()
    project_root = project_root or plugin_root
    label = new_label or f"{settings.host_dist} {env.host_version}"
    steps: list[GateStep] = []
    sub_env = _subprocess_env(settings)
    entry = gate_entry_point(settings, project_root)
    patches = _applied_patches(plugin)
    job = {"plugin_root": str(plugin_root), "package": plugin.package, "modules": plugin.modules,
           "host": settings.host, "env_module": settings.env_module, "env": dict(settings.gate.env), "stub": list(settings.gate.stub),
           "entry_point": entry, "apply": list(settings.gate.apply), "patches": [_patch_job(i, p) for i, p in enumerate(patches)],
           "selections": _selection_jobs(static, settings.flag_prefix)}
    log(f"gate: importing {len(plugin.modules)} plugin modules with {env.python}")
    result, tail = _run_json([str(env.python), str(_HERE / "runner.py")], job, settings.gate.timeout,
                             project_root, sub_env)
    if result is None:
        raise EnvError(f"the gate's subprocess in {env.python} failed: {tail.splitlines()[-1] if tail else '?'}")
    dynamic: list[Finding] = []
    steps.append(_compile_step(result, dynamic, env))
    steps.append(_environment_step(result, env, settings))
    breaks = [break_finding(b, label) for b in result["breaks"]]
    imported_by = {name: Location(b["path"], b["line"], 0, b.get("function", ""), b.get("code", ""))
                   for name, b in result.get("stub_sites", {}).items()}
    dynamic += breaks
    stubs = stub_findings(result["stubbed"], imported_by)
    dynamic += stubs
    steps.append(_import_step(result, breaks, stubs))
    steps.append(_bootstrap_step(result, entry))
    checks, classes = _patch_checks(result, patches)
    dynamic += _patch_findings(checks, label, result)
    steps.append(_patch_step(checks, classes, result))
    selection_findings, selection_step = _selections(result, job["selections"], label)
    dynamic += selection_findings
    if selection_step is not None:
        steps.append(selection_step)
    log("gate: collecting the plugin's tests")
    collect_step, collect_findings = _collect(env, settings, plugin_root, project_root, sub_env, label)
    steps.append(collect_step)
    dynamic += collect_findings
    static_findings = list(static.findings) if static is not None else []
    joined_static, joined_dynamic = join(static_findings, dynamic)
    if static is not None:
        steps.append(_join_step(joined_static, joined_dynamic))
    findings = tuple(sorted([*joined_static, *joined_dynamic], key=Finding.sort_key))
    report = ScanResult(
        plugin_label=static.plugin_label if static else plugin.label,
        old_label=static.old_label if static else "", new_label=static.new_label if static else label,
        findings=findings, checks=(*(static.checks if static else ()), "gate"),
        files_scanned=len(plugin.modules), seconds=time.perf_counter() - started)
    timings = {k: round(v, 2) for k, v in result.get("timings", {}).items()}
    return GateResult(env, tuple(steps), report, tuple(checks), classes, dict(result["stubbed"]), timings,
                      time.perf_counter() - started)


def _compile_step(result: dict, dynamic: list[Finding], env: GateEnv) -> GateStep:
    errors = result["compile"]["errors"]
    for e in errors:
        dynamic.append(Finding(COMPILE_ERROR, {"python": env.python_version, "error": f"{e['type']}: {e['message']}"},
                               Location(e["path"], e["line"], 0, "<module>", e["code"]), subject=e["path"],
                               status=Status.CONFIRMED))
    files = result["compile"]["files"]
    evidence = tuple(f"{e['path']}:{e['line']}: {e['message']}" for e in errors)
    return GateStep("compile", not errors, f"{files - len(errors)} of {files} plugin files compile on Python "
                    f"{env.python_version}", evidence)


def _environment_step(result: dict, env: GateEnv, settings: Settings) -> GateStep:
    version = result.get("host_version")
    if result.get("host_error"):
        return GateStep("host", False, f"`import {settings.host}` fails in {env.python}: {result['host_error']}")
    if version is None and env.host_version is None:
        return GateStep("host", False, f"{settings.host} is not installed in {env.python}")
    shown = ", ".join(f"{k}={v}" for k, v in settings.gate.env) or "none"
    return GateStep("host", True, f"{settings.host} {version or env.host_version} imports in {env.python} "
                    f"(Python {env.python_version}); plugin switches set: {shown}")


def _import_step(result: dict, breaks: list[Finding], stubs: list[Finding]) -> GateStep:
    imports = result["imports"]
    found = [f for f in breaks if f.kind is not BOOTSTRAP_FAILED]
    evidence = [f"{f.plugin}  {f.code} {f.message}" + (f"  | {f.plugin.snippet}" if f.plugin and f.plugin.snippet
                                                        else "") for f in found]
    evidence += [f"stubbed {f.args['name']} ({f.args['why']})" for f in stubs]
    evidence += [f"not importable even with stubs: {m}" for m in imports["failed"]]
    total = len(imports["imported"]) + len(imports["failed"])
    summary = (f"{len(imports['imported'])} of {total} plugin modules import; {len(found)} import-time "
               f"break{'s' if len(found) != 1 else ''} recorded in one run, {len(stubs)} absent module"
               f"{'s' if len(stubs) != 1 else ''} stubbed")
    return GateStep("import", not found and not imports["failed"], summary, tuple(evidence))


def _bootstrap_step(result: dict, entry: str) -> GateStep:
    boot = result["bootstrap"]
    if boot["status"] == "skipped":
        return GateStep("bootstrap", None, "could not run: no entry point found (set [tool.pinport.gate] "
                        "entry-point = 'module:function')")
    calls = boot["calls"]
    evidence = tuple(f"{c['call']}: " + ("ok" if c["status"] == "ok" else
                                         f"raised {c['break']['type']}: {c['break']['message']}"
                                         + (f" at {c['break']['path']}:{c['break']['line']}"
                                            if c["break"].get("path") else "")) for c in calls)
    failed = [c for c in calls if c["status"] == "failed"]
    then = f" and {len(calls) - 1} apply function{'s' if len(calls) != 2 else ''}" if len(calls) > 1 else ""
    if failed:
        return GateStep("bootstrap", False, f"{len(failed)} of {len(calls)} bootstrap calls raised "
                        f"(`{entry}`{then})", evidence)
    return GateStep("bootstrap", True, f"`{entry}`{then} ran in {boot['seconds']:.1f}s", evidence)


def _patch_checks(result: dict, patches: list[Patch]) -> tuple[list[PatchCheck], tuple[int, int]]:
    checks = [PatchCheck(patches[r["id"]], r["status"], r.get("detail", "")) for r in result["patches"]]
    classes: dict[tuple[str, str], list[PatchCheck]] = {}
    for c in checks:
        if c.patch.kind is PatchKind.MEMBER and c.patch.via:
            classes.setdefault((c.patch.plugin_module, c.patch.via), []).append(c)
    applied = sum(1 for members in classes.values() if all(m.status == "applied" for m in members))
    return checks, (applied, len(classes))


def _patch_findings(checks: list[PatchCheck], label: str, result: dict) -> list[Finding]:
    if result["bootstrap"]["status"] == "skipped":
        return []  # nothing was applied: the bootstrap step says why
    out = []
    for c in checks:
        if c.status in ("not-applied", "target-missing"):
            p = c.patch
            plugin_name = f"{p.via}.{p.name}" if p.via else (p.function.name if p.function else p.name)
            out.append(Finding(PATCH_NOT_APPLIED, {"name": p.target, "plugin_name": plugin_name, "detail": c.detail,
                                                   "label": label}, p.site, subject=p.target,
                               status=Status.CONFIRMED))
    return out


def _patch_step(checks: list[PatchCheck], classes: tuple[int, int], result: dict) -> GateStep:
    if result["bootstrap"]["status"] == "skipped":
        return GateStep("patches", None, "could not run: nothing bootstraps the plugin")
    if not checks:
        return GateStep("patches", None, "could not run: static discovery found no patches")
    applied = [c for c in checks if c.status == "applied"]
    missed = [c for c in checks if c.status in ("not-applied", "target-missing")]
    unverified = [c for c in checks if c.status == "unverified"]
    summary = (f"{len(applied)} of {len(checks)} patched members are the plugin's objects after the bootstrap; "
               f"{classes[0]} of {classes[1]} patch classes applied in full")
    if unverified:
        summary += f"; {len(unverified)} not verifiable"
    evidence = tuple(f"{c.patch.site}  {c.patch.target}: {c.status} ({c.detail})" for c in missed)
    evidence += tuple(f"{c.patch.site}  {c.patch.target}: unverified ({c.detail})" for c in unverified)
    return GateStep("patches", not missed, summary, evidence)


def _selections(result: dict, jobs: list[dict], label: str) -> tuple[list[Finding], GateStep | None]:
    if not jobs:
        return [], None
    out, evidence = [], []
    by_id = {j["id"]: j for j in jobs}
    for r in result["selections"]:
        job = by_id[r["id"]]
        flags = ", ".join(f"{k}={v['environ'] if v['environ'] is not None else 'unset'}"
                          + (f" ({v['host']})" if v["host"] is not None else "") for k, v in r["env"].items())
        site = f"{job['path']}:{job['line']}"
        if r["decided"] is None:
            evidence.append(f"{job['candidate']}: not decidable without a model: {r['reason']}"
                            + (f"; flags: {flags}" if flags else ""))
            continue
        chosen = f"`{job['candidate']}` (the parallel implementation: the patches do not reach it)" \
            if r["decided"] else f"the patched `{job['target']}`"
        out.append(Finding(SELECTION, {"chosen": chosen, "test": r.get("test", ""), "site": site, "label": label},
                           None, subject=job["candidate"], status=Status.CONFIRMED,
                           severity=Severity.WARNING if r["decided"] else None,
                           details=(f"flags: {flags}",) if flags else ()))
        evidence.append(f"{site}: selects {chosen}" + (f"; flags: {flags}" if flags else ""))
    bad = [f for f in out if f.level is Severity.WARNING]
    decided = len(out)
    return out, GateStep("selection", not bad if decided else None,
                         f"{decided} of {len(jobs)} parallel-implementation switches decidable without a model"
                         + (f"; {len(bad)} select the unpatched implementation" if bad else ""), tuple(evidence))


def _collect(env: GateEnv, settings: Settings, plugin_root: Path, project_root: Path, sub_env: dict[str, str],
             label: str) -> tuple[GateStep, list[Finding]]:
    tests = project_root / settings.gate.tests
    if not tests.exists():
        return GateStep("tests", None, f"could not run: no tests ({settings.gate.tests}/ not in {project_root})"), []
    command = [str(env.python), "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
               "-p", "_pinport_gate_collect", str(tests)]
    data, tail = _run_json(command, None, settings.gate.timeout, project_root, sub_env, plugin_root)
    if data is None:
        reason = "pytest is not installed there" if "No module named pytest" in tail else tail.splitlines()[-1:] \
            or ["no result"]
        return GateStep("tests", None, f"could not run `pytest --collect-only` in {env.python}: "
                        f"{reason if isinstance(reason, str) else reason[0]}"), []
    findings = []
    for e in data["errors"]:
        path = e["nodeid"].split("::")[0]
        line = _error_line(e["text"], path)
        findings.append(Finding(COLLECTION_ERROR, {"error": e["error"], "label": label},
                                Location(path, line, 0, "<module>"), subject=path, status=Status.CONFIRMED))
    evidence = tuple(f"{f.plugin.path}: {f.args['error']}" for f in findings if f.plugin)
    return GateStep("tests", not findings, f"{data['collected']} tests collected, {len(findings)} collection "
                    f"error{'s' if len(findings) != 1 else ''}", evidence), findings


def _error_line(text: str, path: str) -> int:
    lines = [int(m) for m in re.findall(rf"{re.escape(path)}:(\d+)", text)]
    return lines[-1] if lines else 0


def _join_step(joined_static: list[Finding], joined_dynamic: list[Finding]) -> GateStep:
    confirmed = [f for f in joined_static if f.status is Status.CONFIRMED]
    unpredicted = [f for f in joined_dynamic if "predicted_by" in f.extra and not f.extra["predicted_by"]]
    breaks = [f for f in joined_dynamic if "prediction" in f.args]
    evidence = tuple(f"confirmed {f.code} {f.plugin}: {f.message}" for f in confirmed)
    evidence += tuple(f"not predicted: {f.code} {f.plugin}: {f.message}" for f in unpredicted)
    return GateStep("join", not unpredicted if breaks else True,
                    f"{len(breaks) - len(unpredicted)} of {len(breaks)} breaks predicted by a static finding; "
                    f"{len(confirmed)} static findings confirmed", evidence)


__all__ = ["GateResult", "GateStep", "PatchCheck", "find_entry_point", "run_gate"]
