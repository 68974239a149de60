"""The gate's worker: run BY PATH with the interpreter of the environment under test, never imported.

`python runner.py JOB.json OUT.json` byte-compiles the plugin in memory, imports every plugin
module, bootstraps the plugin the way the host would (its entry-point function) and checks that
each patch took: the target's member now *is* the plugin's object. A missing module, name or
attribute is recorded with the innermost plugin frame, a stub stands in its place and the
import is retried, so one run lists every import-time break instead of the first.

Standard library only, and nothing of pinport: the environment under test need not have pinport
(or even the same Python). Nothing is written into the plugin tree (no byte-code files).
"""

from __future__ import annotations

import ast
import builtins
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import linecache
import os
import re
import sys
import time
import traceback
import types

_HERE = __file__
_IMPORTLIB = os.sep + "importlib" + os.sep
MAX_RETRIES = 200  # per imported module: one stub per retry
_CANNOT_IMPORT = re.compile(r"cannot import name '([^']+)' from '([^']+)'")


# -- stubs ---------------------------------------------------------------------------------------
class _StubMeta(type):
    """Every stub is a class, so it works as a base, a decorator, a type argument and a value."""

    def __getattr__(cls, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _new_stub(f"{cls.__name__}.{name}")

    def __call__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], _StubMeta):
            return args[0]  # used as a decorator: keep the decorated function
        return _new_stub(f"{cls.__name__}()")

    def __getitem__(cls, item):
        return cls

    def __or__(cls, other):
        return cls

    __ror__ = __or__

    def __iter__(cls):
        return iter(())

    def __len__(cls):
        return 0

    def __bool__(cls):
        return False

    def __mro_entries__(cls, bases):
        return (cls,)


def _new_stub(name: str) -> type:
    return _StubMeta(name.rpartition(".")[2] or name, (), {"__module__": "pinport_gate_stub",
                                                             "__pinport_stub__": name})


def is_stub(obj) -> bool:
    return isinstance(obj, _StubMeta) or isinstance(obj, _StubModule)


class _StubModule(types.ModuleType):
    """A module that exists only so the import goes on; every attribute is a stub."""

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        value = _new_stub(f"{self.__name__}.{name}")
        setattr(self, name, value)
        return value


class _StubLoader(importlib.abc.Loader):
    def create_module(self, spec):
        module = _StubModule(spec.name)
        module.__path__ = []  # a package, so its submodules can be stubbed as well
        return module

    def exec_module(self, module):
        return None


class _StubFinder(importlib.abc.MetaPathFinder):
    """Last on sys.meta_path: asked only for modules no real finder has.

    It stands in for modules under the plugin package (compiled extensions the source tree lacks),
    for host modules the plugin imports (a break, recorded), for other modules the plugin imports
    (optional dependencies absent from the environment), and for the names in `stub`. An import
    made by the host or a third-party library is left to fail as it would: they guard their own
    optional imports, and a stub there would change what the host does.
    """

    def __init__(self, gate: _Gate) -> None:
        self.gate = gate

    def find_spec(self, fullname, path=None, target=None):
        gate = self.gate
        forced = any(fullname == s or fullname.startswith(s + ".") for s in gate.forced)
        importer, fromlist = gate.importing_plugin_frame()
        if not forced and importer is None:
            return None
        kind = gate.classify_missing(fullname, forced)
        if kind == "host" and fromlist:
            return None  # a name missing from a host module: the ImportError that follows records it
        if kind == "host" and importer is not None:
            gate.record_missing_module(fullname, importer)
        gate.stubbed.setdefault(fullname, kind)
        if importer is not None and fullname not in gate.stub_sites:
            line = importer.f_lineno
            gate.stub_sites[fullname] = {"path": gate.rel(importer.f_code.co_filename), "line": line,
                                         "code": linecache.getline(importer.f_code.co_filename, line).strip(),
                                         "function": importer.f_code.co_name}
        return importlib.machinery.ModuleSpec(fullname, _StubLoader(), is_package=True)


# -- the gate ------------------------------------------------------------------------------------
class _Gate:
    def __init__(self, job: dict) -> None:
        self.job = job
        self.root = os.path.realpath(job["plugin_root"])
        self.package = job["package"]
        self.host = job["host"]
        self.env_module = job.get("env_module", "")  # the host profile's `env-module` (`envs`)
        self.forced = tuple(job.get("stub", ()))
        self.stubbed: dict[str, str] = {}  # module -> "extension" | "optional" | "host" | "forced"
        self.stub_sites: dict[str, dict] = {}  # module -> the plugin line that imported it
        self.breaks: list[dict] = []
        self._seen: set[tuple] = set()
        self.injected: list[dict] = []

    # where code comes from
    def in_plugin(self, filename: str) -> bool:
        try:
            real = os.path.realpath(filename)
        except (TypeError, ValueError):
            return False
        return real.startswith(self.root + os.sep)

    def rel(self, filename: str) -> str:
        return os.path.relpath(os.path.realpath(filename), self.root).replace(os.sep, "/")

    def importing_plugin_frame(self):
        """The frame that asked for the import when it is plugin code (importlib and this file skipped),
        and whether importlib asks because `from X import name` found no attribute `name` on X."""
        frame = sys._getframe(1)
        fromlist = False
        while frame is not None:
            name = frame.f_code.co_filename
            if name == _HERE or name.startswith("<frozen importlib") or _IMPORTLIB in name:
                fromlist = fromlist or frame.f_code.co_name == "_handle_fromlist"
                frame = frame.f_back
                continue
            return (frame if self.in_plugin(name) else None), fromlist
        return None, fromlist

    def record_missing_module(self, fullname: str, frame) -> None:
        """A host module the plugin imports that this host does not have: a break, at the import."""
        line = frame.f_lineno
        code = linecache.getline(frame.f_code.co_filename, line).strip()
        key = (self.rel(frame.f_code.co_filename), line, "ModuleNotFoundError", fullname)
        if key in self._seen:
            return
        self._seen.add(key)
        self.breaks.append({"phase": "import", "module": frame.f_globals.get("__name__", ""),
                            "type": "ModuleNotFoundError", "message": f"No module named '{fullname}'",
                            "fix": "stub module", "path": key[0], "line": line, "code": code,
                            "function": frame.f_code.co_name, "missing": fullname})

    def classify_missing(self, fullname: str, forced: bool) -> str:
        top = fullname.partition(".")[0]
        if forced:
            return "forced"
        if top == self.package:
            return "extension"
        if top == self.host:
            return "host"
        return "optional"

    # recording a break
    def record(self, exc: BaseException, module: str, phase: str, fix: str, missing: str = "") -> dict:
        frame = self.plugin_frame(exc.__traceback__)
        where = {"path": "", "line": 0, "code": "", "function": ""}
        if frame is not None:
            where = {"path": self.rel(frame.filename), "line": frame.lineno or 0,
                     "code": (frame.line or "").strip(), "function": frame.name}
        entry = {"phase": phase, "module": module, "type": type(exc).__name__,
                 "message": str(exc).splitlines()[0] if str(exc) else "", "fix": fix, **where,
                 "missing": missing}
        key = (entry["path"], entry["line"], entry["type"], entry["message"])
        if key not in self._seen:
            self._seen.add(key)
            self.breaks.append(entry)
        return entry

    def plugin_frame(self, tb):
        frames = [f for f in traceback.extract_tb(tb) if self.in_plugin(f.filename)]
        return frames[-1] if frames else None

    def raising_module(self, tb) -> str:
        """The module whose top-level code raised (the innermost `<module>` frame)."""
        name = ""
        while tb is not None:
            if tb.tb_frame.f_code.co_name == "<module>":
                name = tb.tb_frame.f_globals.get("__name__", name)
            tb = tb.tb_next
        return name

    # standing a stub in place of what is missing
    def stub_for(self, exc: BaseException, phase: str, module: str) -> bool:
        """Record the break and make the next attempt get past it; False when it cannot be fixed."""
        if isinstance(exc, ModuleNotFoundError) and exc.name and exc.name not in sys.modules:
            # a module no finder has and the plugin did not import itself (else it was stubbed)
            self.record(exc, module, phase, "stub module", exc.name)
            self._stub_module(exc.name, self.classify_missing(exc.name, False))
            return True
        if isinstance(exc, ImportError):
            match = _CANNOT_IMPORT.search(str(exc))
            if match and match.group(2) in sys.modules:
                self.record(exc, module, phase, "stub name", f"{match.group(2)}.{match.group(1)}")
                return self._inject(sys.modules[match.group(2)], match.group(1))
        elif isinstance(exc, AttributeError) and getattr(exc, "obj", None) is not None and exc.name:
            owner = exc.obj
            label = getattr(owner, "__qualname__", None) or getattr(owner, "__name__", type(owner).__name__)
            prefix = f"{owner.__module__}." if isinstance(owner, type) else ""
            self.record(exc, module, phase, "stub attribute", f"{prefix}{label}.{exc.name}")
            return self._inject(owner, exc.name)
        elif isinstance(exc, NameError) and getattr(exc, "name", None):
            self.record(exc, module, phase, "stub name", exc.name)
            return self._inject(builtins, exc.name)
        failed = self.raising_module(exc.__traceback__)
        if failed and failed.partition(".")[0] != self.package and failed not in self.stubbed:
            # a host or library module that cannot be imported here (say, it needs a GPU library):
            # the plugin line that imports it is the evidence, the whole module is stubbed
            self.record(exc, module, phase, "stub module", failed)
            self._stub_module(failed, "raises")
            return True
        self.record(exc, module, phase, "none")
        return False

    def _inject(self, owner, name: str) -> bool:
        if owner is None or is_stub(owner):
            return False
        try:
            if name in getattr(owner, "__dict__", {}):
                return False  # it is there now: retrying would loop
            setattr(owner, name, _new_stub(name))
        except (AttributeError, TypeError):
            return False
        self.injected.append({"owner": getattr(owner, "__name__", repr(owner)), "name": name})
        return True

    def _stub_module(self, name: str, kind: str) -> None:
        self.stubbed.setdefault(name, kind)
        spec = importlib.machinery.ModuleSpec(name, _StubLoader(), is_package=True)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        parent, _, leaf = name.rpartition(".")
        if parent and parent in sys.modules:
            try:
                setattr(sys.modules[parent], leaf, module)
            except (AttributeError, TypeError):
                pass

    # the steps
    def compile_all(self) -> dict:
        errors, count = [], 0
        base = os.path.join(self.root, *self.package.split("."))
        for folder, dirs, files in os.walk(base):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if not name.endswith(".py"):
                    continue
                path = os.path.join(folder, name)
                count += 1
                try:
                    with open(path, "rb") as handle:
                        compile(handle.read(), path, "exec", dont_inherit=True)
                except (SyntaxError, ValueError) as exc:
                    errors.append({"path": self.rel(path), "line": getattr(exc, "lineno", 0) or 0,
                                   "code": (getattr(exc, "text", "") or "").strip(),
                                   "type": type(exc).__name__, "message": getattr(exc, "msg", str(exc))})
        return {"files": count, "errors": errors}

    def import_all(self, modules: list[str]) -> dict:
        imported, failed = [], []
        for module in modules:
            for _ in range(MAX_RETRIES):
                try:
                    importlib.import_module(module)
                except BaseException as exc:  # noqa: BLE001 - analysed code may raise anything
                    if isinstance(exc, KeyboardInterrupt):
                        raise
                    if self.stub_for(exc, "import", module):
                        continue
                    failed.append(module)
                    break
                else:
                    imported.append(module)
                    break
            else:
                failed.append(module)
        return {"imported": imported, "failed": failed}

    def bootstrap(self) -> dict:
        """Call the entry point as the host would, then each `apply` function; a failure is recorded."""
        spec = self.job.get("entry_point") or ""
        if not spec:
            return {"status": "skipped", "reason": "no entry point"}
        started = time.perf_counter()
        calls = []
        for call in [spec, *self.job.get("apply", ())]:
            try:
                _load(call)()
            except BaseException as exc:  # noqa: BLE001 - analysed code may raise anything
                if isinstance(exc, KeyboardInterrupt):
                    raise
                entry = self.record(exc, call, "bootstrap", "none")
                calls.append({"call": call, "status": "failed", "break": entry})
            else:
                calls.append({"call": call, "status": "ok"})
        failed = [c for c in calls if c["status"] == "failed"]
        return {"status": "failed" if failed else "ok", "entry_point": spec, "calls": calls,
                "break": failed[0]["break"] if failed else None, "seconds": time.perf_counter() - started}

    def verify(self, patches: list[dict]) -> list[dict]:
        return [self._verify_one(p) for p in patches]

    def _verify_one(self, patch: dict) -> dict:
        out = {"id": patch["id"]}
        owner = _resolve(patch["owner"])
        if owner is None or is_stub(owner):
            out.update(status="target-missing", detail=f"{patch['owner']} is not importable here"
                       if owner is None else f"{patch['owner']} is a stub (it is missing)")
            return out
        plugin_obj, found = _plugin_object(patch["module"], patch["qualname"])
        current = _raw_member(owner, patch["name"])
        if current is _MISSING:
            out.update(status="not-applied", detail=f"{patch['owner']} has no member `{patch['name']}`")
        elif not found:
            # a function defined inside another (a `monkey_patch()` helper): known by where its code is
            if self._defined_at(current, patch):
                out.update(status="applied")
            else:
                out.update(status="unverified" if not _code_of(current) else "not-applied",
                           detail=f"{patch['owner']}.{patch['name']} is {_describe(current)}")
        elif _same(current, plugin_obj):
            out.update(status="applied")
        else:
            out.update(status="not-applied", detail=f"{patch['owner']}.{patch['name']} is {_describe(current)}")
        return out

    def _defined_at(self, obj, patch: dict) -> bool:
        code = _code_of(obj)
        if code is None or not self.in_plugin(code.co_filename) or self.rel(code.co_filename) != patch["path"]:
            return False
        return patch["line"] - 3 <= code.co_firstlineno <= patch["end_line"]

    def selections(self, items: list[dict]) -> list[dict]:
        """Evaluate each switch between a patched class and a parallel one, as the host stands now."""
        results = []
        for item in items:
            try:
                importlib.import_module(item["module"])
            except Exception:  # noqa: BLE001 - reported below, where the switch is read
                pass
            env_module = sys.modules.get(f"{self.host}.{self.env_module}") if self.env_module else None
            values = {}
            for var in item.get("env_vars", ()):
                parsed = None
                if env_module is not None and not is_stub(env_module):
                    try:
                        parsed = repr(getattr(env_module, var))
                    except Exception:  # noqa: BLE001 - a host flag parser may raise
                        parsed = None
                values[var] = {"environ": os.environ.get(var), "host": parsed}
            result = {"id": item["id"], "env": values, "decided": None, "reason": "", "test": ""}
            results.append(result)
            try:
                module = importlib.import_module(item["module"])
                node, candidate_in_body = _switch_at(module, item["line"], item["candidate"])
            except Exception as exc:  # noqa: BLE001
                result["reason"] = f"cannot read the switch: {type(exc).__name__}: {exc}"
                continue
            if node is None:
                result["reason"] = "no `if` naming the candidate at that line"
                continue

            result["test"] = ast.unparse(node.test) if hasattr(ast, "unparse") else ""
            try:
                value = eval(compile(ast.Expression(node.test), "<switch>", "eval"), dict(vars(module)))  # noqa: S307
            except NameError as exc:
                result["reason"] = f"`{result['test']}` needs `{exc.name}` (a model or config)"
            except Exception as exc:  # noqa: BLE001
                result["reason"] = f"`{result['test']}` raised {type(exc).__name__}: {exc}"
            else:
                result["decided"] = bool(value) == candidate_in_body
                result["value"] = repr(value)
        return results


def _switch_at(module, line: int, candidate: str):
    """The `if` (or conditional expression) at `line` of the module's source, and whether its body
    (rather than what follows it) builds the candidate: a name there that is the candidate class in
    the module's globals, or a `from ... import` of it."""
    with open(module.__file__, "rb") as handle:
        tree = ast.parse(handle.read())
    wanted = _resolve(candidate)
    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.IfExp)) and node.lineno == line:
            body = node.body if isinstance(node, ast.If) else [node.body]
            for part in body:
                for inner in ast.walk(part):
                    if isinstance(inner, ast.Name) and wanted is not None and vars(module).get(inner.id) is wanted:
                        return node, True
                    if isinstance(inner, ast.ImportFrom) and any(
                            f"{inner.module}.{a.name}" == candidate for a in inner.names):
                        return node, True
            return node, False
    return None, False


_MISSING = object()


def _load(spec: str):
    """"module:attr.path" to the object (an entry point's syntax)."""
    module_name, _, attrs = spec.partition(":")
    obj = importlib.import_module(module_name)
    for part in attrs.split(".") if attrs else ():
        obj = getattr(obj, part)
    return obj


def _resolve(path: str):
    """A dotted path to the object: the longest importable module prefix, then attributes."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        name = ".".join(parts[:cut])
        try:
            obj = sys.modules.get(name) or importlib.import_module(name)
        except Exception:  # noqa: BLE001
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, None)
            if obj is None:
                return None
        return obj
    return None


def _plugin_object(module: str, qualname: str):
    obj = sys.modules.get(module)
    if obj is None:
        return None, False
    parts = qualname.split(".")
    for part in parts[:-1]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None, False
    value = _raw_member(obj, parts[-1])
    return (None, False) if value is _MISSING else (value, True)


def _raw_member(owner, name: str):
    if isinstance(owner, type):
        for klass in owner.__mro__:
            if name in klass.__dict__:
                return klass.__dict__[name] if klass is owner else ("inherited", klass, klass.__dict__[name])
        return _MISSING
    return getattr(owner, name, _MISSING)


def _unwrap(obj):
    for attr in ("__func__", "fget"):
        inner = getattr(obj, attr, None)
        if inner is not None:
            return inner
    return obj


def _code_of(obj):
    inner = _unwrap(obj)
    return getattr(inner, "__code__", None)


def _same(current, plugin_obj) -> bool:
    if isinstance(current, tuple) and len(current) == 3 and current[0] == "inherited":
        return False  # the class itself does not define it: the patch was not copied onto it
    return current is plugin_obj or _unwrap(current) is _unwrap(plugin_obj)


def _describe(obj) -> str:
    if isinstance(obj, tuple) and len(obj) == 3 and obj[0] == "inherited":
        return f"inherited from {obj[1].__module__}.{obj[1].__qualname__}"
    inner = _unwrap(obj)
    module = getattr(inner, "__module__", None)
    qual = getattr(inner, "__qualname__", None)
    if module and qual:
        return f"{module}.{qual}"
    return type(obj).__name__


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as handle:
        job = json.load(handle)
    sys.dont_write_bytecode = True  # nothing written into the plugin tree
    os.environ.update(job.get("env", {}))
    gate = _Gate(job)
    sys.path.insert(0, gate.root)
    sys.meta_path.append(_StubFinder(gate))
    timings = {}
    out: dict = {"python": sys.version.split()[0], "executable": sys.executable}
    started = time.perf_counter()
    out["compile"] = gate.compile_all()
    timings["compile"] = time.perf_counter() - started
    host_version = None
    started = time.perf_counter()
    try:
        host = importlib.import_module(gate.host)
        host_version = getattr(host, "__version__", None)
    except Exception as exc:  # noqa: BLE001
        out["host_error"] = f"{type(exc).__name__}: {exc}"
    out["host_version"] = host_version
    timings["host"] = time.perf_counter() - started
    started = time.perf_counter()
    out["imports"] = gate.import_all(job["modules"])
    timings["import"] = time.perf_counter() - started
    started = time.perf_counter()
    out["bootstrap"] = gate.bootstrap()
    timings["bootstrap"] = time.perf_counter() - started
    started = time.perf_counter()
    out["patches"] = gate.verify(job.get("patches", []))
    out["selections"] = gate.selections(job.get("selections", []))
    timings["verify"] = time.perf_counter() - started
    out["breaks"] = gate.breaks
    out["stubbed"] = gate.stubbed
    out["stub_sites"] = gate.stub_sites
    out["timings"] = timings
    with open(argv[2], "w", encoding="utf-8") as handle:
        json.dump(out, handle)
    return 0


if __name__ == "__main__":
    if sys.path and os.path.realpath(sys.path[0]) == os.path.dirname(os.path.realpath(__file__)):
        del sys.path[0]  # run by path: pinport's own modules must not become importable top-level names
    sys.exit(main(sys.argv))
