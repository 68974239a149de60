"""The architecture's promises (issue #8): one member-lookup rule, shared facts, checks that only judge."""

import pytest

from harness import expect, run_scan
from pinport.findings import Finding, Kind, Severity, Status

_STEP = """\
    def step(self, batch):
        outputs = []
        for item in batch:
            value = item * self.scale
            outputs.append(value)
        self.steps += 1
        return outputs
"""
_ENGINE = """\
{imports}

class Engine{bases}:
    def __init__(self, config):
        self.config = config
        self.scale = config.scale
        self.steps = 0

""" + _STEP
_MIRROR = """\
from plug.patching import ArcticPatch
from host.engine import Engine


class EnginePatch(ArcticPatch[Engine]):
""" + _STEP
PATCHING = {"plug/patching.py": "class ArcticPatch:\n    pass\n"}


@pytest.mark.parametrize(("imports", "bases"), [
    ("from abc import ABC", "(ABC)"),  # `Engine(ABC)`: the lookup looks past the inert base
    ("import abc", "(abc.ABC)"),
    ("from typing import Protocol", "(Protocol)"),
    ("import os", ""),  # the same class without a base
])
def test_mirror_reading_a_member_new_no_longer_sets(imports, bases):
    old = _ENGINE.format(imports=imports, bases=bases)
    new = old.replace("        self.scale = config.scale\n", "")
    result = run_scan({"host/engine.py": old}, {"host/engine.py": new}, {"plug/patch.py": _MIRROR, **PATCHING})
    gone = [f for f in result.findings if f.args.get("name") == "scale"]
    assert [(f.code, f.level, f.status) for f in gone] == [("PP1202", Severity.ERROR, Status.DRIFT)]
    finding = gone[0]
    assert (finding.plugin.path, finding.plugin.line, finding.plugin.unit) == ("plug/patch.py", 9, "EnginePatch.step")
    assert finding.subject == "host.engine.Engine.scale"
    line = old.splitlines().index("        self.scale = config.scale") + 1
    assert (finding.old.path, finding.old.line, finding.old.snippet) == ("host/engine.py", line,
                                                                         "self.scale = config.scale")
    assert finding.new is None


# -- guard rails: the layout is the architecture -------------------------------------------------
import ast  # noqa: E402
import inspect  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pinport  # noqa: E402
from pinport.checks import CHECKS, Check  # noqa: E402

SRC = Path(pinport.__file__).parent
CHECK_MODULES = {type(c).__module__.rpartition(".")[2] for c in CHECKS}


@pytest.fixture(scope="module")
def modules() -> dict[str, ast.Module]:
    """Every pinport module by dotted name, parsed (once for all the guard rails)."""
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = ast.parse(path.read_text(encoding="utf-8"))
    return out


def _check_modules(modules: dict[str, ast.Module]) -> dict[str, ast.Module]:
    """The modules under pinport.checks (the registry and base included)."""
    return {name: tree for name, tree in modules.items() if name.startswith("pinport.checks")}


def _called(node: ast.AST) -> str:
    """The name a call calls (`f(...)`, `x.f(...)`), "" for anything else."""
    if not isinstance(node, ast.Call):
        return ""
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _imported(module: str, tree: ast.Module) -> set[str]:
    """Absolute names of the modules (or module members) `module` imports."""
    package = module if module in ("pinport", "pinport.checks") or module.endswith(".__init__") else \
        module.rpartition(".")[0]
    if (SRC.parent / module.replace(".", "/") / "__init__.py").is_file():
        package = module
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
    return out


def test_no_check_imports_another_check(modules):
    """Nor does `checks/base.py`, which every check imports (that would be an import of them all)."""
    for name, tree in _check_modules(modules).items():
        if name.rpartition(".")[2] not in CHECK_MODULES | {"base"}:
            continue
        own = name.rpartition(".")[2]
        bad = {i for i in _imported(name, tree) if i.startswith("pinport.checks.")
               and i.split(".")[2] in CHECK_MODULES - {own}}
        assert not bad, f"{name} imports another check: {sorted(bad)}"


def test_no_module_imports_a_private_module_of_another_package(modules):
    for name, tree in modules.items():
        package = name if (SRC.parent / name.replace(".", "/") / "__init__.py").is_file() else name.rpartition(".")[0]
        for imported in _imported(name, tree):
            parts = imported.split(".")
            if parts[0] != "pinport":
                continue
            for i, part in enumerate(parts[1:], 1):
                if part.startswith("_") and not part.startswith("__"):
                    owner = ".".join(parts[:i])
                    assert owner == package, f"{name} imports {imported}, private to {owner}"
                    break


# What a check may not call: the parser, or anything that reads, lists or searches source text.
_READS_SOURCE = {"parsed", "source", "lines", "line_text", "read_text", "read_bytes", "grep", "parse", "walk_plugin",
                 "parse_module", "summarize", "load_index", "load_indexes", "load_text", "lend_from",
                 "decode_source", "python_lines", "readlines", "iterdir", "glob", "rglob", "scandir", "listdir"}
# Built-ins a check may not call: they open files, compile or run code.
_BUILTINS = {"open", "compile", "exec", "eval", "__import__"}
# What a check may not import: the parser, the file sources, file and process access, code loading.
_READS_MODULES = ("pinport.model.parse", "pinport.sources", "ast.parse", "pathlib", "os", "io", "tokenize",
                  "libcst", "glob", "mmap", "shutil", "subprocess", "importlib", "pickle", "marshal", "runpy")


def test_no_check_parses_or_reads_source(modules):
    for name, tree in _check_modules(modules).items():
        for node in ast.walk(tree):
            called = _called(node)
            assert called not in _READS_SOURCE, \
                f"{name}:{node.lineno} calls `{called}`: checks read facts (ctx.facts, the host views), not source"
            assert not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _BUILTINS), \
                f"{name}:{node.lineno} calls the built-in `{called}`: a check neither opens files nor compiles code"


def test_no_check_imports_the_parser_or_file_access(modules):
    for name, tree in _check_modules(modules).items():
        bad = {i for i in _imported(name, tree) if any(i == m or i.startswith(m + ".") for m in _READS_MODULES)}
        assert not bad, f"{name} imports {sorted(bad)}: only model/ parses, only sources/ reads files"


# Module-level state that is allowed, with why: not facts derived from analysed code.
_ALLOWED_STATE = {
    ("pinport.sources.package_index", "pip_settings"),  # pip's configuration of this process
    ("pinport.gate.collect", "_errors"), ("pinport.gate.collect", "_collected"),  # a pytest plugin's session
    ("pinport.model.codec", "_DECODERS"),  # one decoder per Python type of the cache format (code, not data)
    # pinport's own rule documentation (package data, not analysed code)
    ("pinport.report.rules", "_texts"), ("pinport.report.rules", "rules"),
    ("pinport.sources.package_index", "_netrc"),  # the user's netrc file, read once per process
}
_CONTAINERS = {"dict", "list", "set", "defaultdict", "OrderedDict", "Counter", "deque", "ChainMap"}
_MUTATORS = {"setdefault", "update", "append", "add", "extend", "insert", "pop", "popitem", "clear", "remove",
             "discard", "appendleft", "__setitem__"}
_MEMOISERS = {"cache", "lru_cache", "memoize", "memoise", "cached"}


def _is_container(value: ast.AST | None) -> bool:
    """A mutable container built where it is bound: a literal or a container constructor."""
    if isinstance(value, ast.Dict | ast.List | ast.Set | ast.DictComp | ast.ListComp | ast.SetComp):
        return True
    return isinstance(value, ast.Call) and _called(value) in _CONTAINERS


def _bound_containers(body: list[ast.stmt]) -> set[str]:
    """Names a module or class body binds to a mutable container."""
    out = set()
    for node in body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) \
            else []
        if _is_container(getattr(node, "value", None)):
            out.update(t.id for t in targets if isinstance(t, ast.Name))
    return out


def _named(node: ast.AST) -> str:
    """`x` for the name `x` and for an attribute `<anything>.x`; "" for anything else."""
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def _fills(function: ast.AST, shared: set[str], attributes: set[str]) -> Iterator[tuple[int, str]]:
    """(line, name) where a function body stores into, or calls a mutator of, a shared container."""
    def is_shared(node: ast.AST) -> bool:
        return (isinstance(node, ast.Name) and node.id in shared) or \
            (isinstance(node, ast.Attribute) and node.attr in attributes)

    for node in ast.walk(function):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del) and is_shared(node.value):
            yield node.lineno, _named(node.value)
        elif isinstance(node, ast.AugAssign) and is_shared(node.target):
            yield node.lineno, _named(node.target)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in _MUTATORS and is_shared(node.func.value):
            yield node.lineno, _named(node.func.value)


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    return (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))


def test_no_module_level_cache_of_derived_facts(modules):
    """No `global` rebinding, no weak-keyed tables, no memoising decorators (on functions or methods), no
    module- or class-level container that a function fills: derived facts live on ScanFacts, HostView or
    CodeIndex, and nothing survives the scan."""
    for name, tree in modules.items():
        for imported in _imported(name, tree):
            assert imported.partition(".")[0] != "weakref", f"{name} imports {imported}: a weak-keyed cache"
        shared = {n for n in _bound_containers(tree.body) if (name, n) not in _ALLOWED_STATE}
        attributes = {n for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for n in _bound_containers(c.body)}
        for function in _functions(tree):
            for deco in function.decorator_list:
                text = ast.unparse(deco.func if isinstance(deco, ast.Call) else deco)
                if text.rpartition(".")[2] in _MEMOISERS:
                    assert (name, function.name) in _ALLOWED_STATE, f"{name}.{function.name} is memoised in a global"
            for line, filled in _fills(function, shared, attributes):
                raise AssertionError(f"{name}:{line} fills the module- or class-level `{filled}`")
        for node in ast.walk(tree):
            assert not isinstance(node, ast.Global), f"{name}:{node.lineno} rebinds module state (`global`)"


def test_the_guard_rails_catch_what_they_forbid():
    """The cache and source guards on small violating modules (each guard can fail)."""
    weak = ast.parse("import weakref\n_SEEN = weakref.WeakKeyDictionary()\n")
    assert "weakref" in _imported("pinport.model.x", weak)
    filled = ast.parse("_CACHE = {}\n\n\ndef look(index):\n    _CACHE[index] = 1\n")
    assert list(_fills(filled.body[1], _bound_containers(filled.body), set())) == [(5, "_CACHE")]
    on_class = ast.parse("class View:\n    _memo = dict()\n\n    def get(self, k):\n"
                         "        return self._memo.setdefault(k, 1)\n")
    cls = on_class.body[0]
    assert list(_fills(cls.body[1], set(), _bound_containers(cls.body))) == [(5, "_memo")]
    registry = ast.parse("_TABLE = {}\n_TABLE['a'] = 1\n\n\ndef get(k):\n    return _TABLE[k]\n")
    assert not list(_fills(registry.body[2], _bound_containers(registry.body), set()))  # filled at import: fine
    reads = ast.parse("from pathlib import Path\n\n\ndef run(ctx):\n    return ctx.index.parsed('m')\n")
    assert _called(reads.body[1].body[0].value) in _READS_SOURCE
    assert "pathlib.Path" in _imported("pinport.checks.x", reads)


# The pipeline a finding travels, lowest first (STYLE's layout): an import may only point down it.
_STAGES = ("sources", "model", "plugin", "facts", "checks", "scan", "report", "cli")


def test_imports_point_down_the_pipeline(modules):
    for name, tree in modules.items():
        stage = name.split(".")[1] if name.count(".") else ""
        if stage not in _STAGES:
            continue
        for imported in _imported(name, tree):
            parts = imported.split(".")
            if parts[0] == "pinport" and len(parts) > 1 and parts[1] in _STAGES:
                assert _STAGES.index(parts[1]) <= _STAGES.index(stage), \
                    f"{name} imports {imported}: {stage} sits below {parts[1]} in the pipeline"


def test_registry_order_and_its_docstring_table_agree():
    import pinport.checks as registry

    rows = [line.split("|")[1:3] for line in registry.__doc__.splitlines() if line.startswith("| ")]
    table = [(name.strip(), module.strip()) for name, module in rows[1:]]  # the header row first
    assert table == [(c.name, f"{type(c).__module__.rpartition('.')[2]}.py") for c in CHECKS]


def test_every_check_implements_the_protocol_including_cost():
    assert {"name", "drift", "kinds", "description", "cost"} <= set(Check.__annotations__)
    for check in CHECKS:
        assert isinstance(check.cost, int | float) and check.cost > 0, check.name
        assert check.name and check.description and all(k.check == check.name for k in check.kinds)
        assert inspect.isgeneratorfunction(type(check).run), check.name


def test_checks_judging_new_only_yield_nothing_on_the_old_pass():
    from types import SimpleNamespace

    from pinport.checks.base import judges_new_only
    from pinport.checks.call_defaults import DefaultsCheck
    from pinport.checks.copied_lines import CopiedLinesCheck

    class Counts:
        @judges_new_only
        def run(self, ctx):
            yield from ctx.items

    items = [1, 2]
    assert list(Counts().run(SimpleNamespace(judging_new=True, items=items))) == items
    assert list(Counts().run(SimpleNamespace(judging_new=False, items=items))) == []
    assert inspect.isgeneratorfunction(Counts.run)
    for check in (DefaultsCheck(), CopiedLinesCheck()):  # the OLD pass reads no fact at all
        assert list(check.run(SimpleNamespace(judging_new=False))) == []


_SEEN = Kind("PP9901", "Seen", "seen `{name}`", Severity.INFO, None, "crashes")


class _CrashesOnASecondPatch:
    """Yields a finding for the first patch, then raises while judging the next one."""

    name = "crashes"
    drift = ()
    kinds = ()
    description = "raises on its second patch"
    cost = 1

    def run(self, ctx):
        for i, patch in enumerate(p for p in ctx.plugin.surface.patches if p.function is not None):
            if i:
                raise KeyError(patch.name)
            yield Finding(_SEEN, {"name": patch.name}, patch.site, subject=patch.target)


def test_a_crashing_check_keeps_its_findings_and_names_the_plugin_unit():
    plugin = {"plug/patch.py": _MIRROR + "\n    def reset(self):\n        return None\n", **PATCHING}
    old = _ENGINE.format(imports="import os", bases="") + "\n    def reset(self):\n        return 0\n"
    result = run_scan({"host/engine.py": old}, {"host/engine.py": old}, plugin,
                      checks=(_CrashesOnASecondPatch(),), strict=False)
    kept = [f for f in result.findings if f.code != "PP0099"]
    assert [(f.plugin.path, f.plugin.unit) for f in kept] == [("plug/patch.py", "EnginePatch.step")]
    crash = next(f for f in result.findings if f.code == "PP0099")
    assert crash.args == {"check": "crashes", "error": "KeyError: 'reset'"}
    line = plugin["plug/patch.py"].splitlines().index("    def reset(self):") + 1
    assert (crash.plugin.path, crash.plugin.line, crash.plugin.unit) == ("plug/patch.py", line, "EnginePatch.reset")
    assert crash.level is Severity.WARNING


def test_host_specifics_are_settings():
    """The plugin-loader name and the env-flag module name come from the settings, not the checks."""
    from pinport.checks.host_kinds import HostKindsCheck
    from pinport.checks.load_timing import LoadTimingCheck

    config = "class Config:\n    def __init__(self):\n        self.x = 1\n"
    core = "from host.config import Config\n\n\ndef start():\n    cfg = Config()\n    boot_plugins()\n"
    plugin = ("from plug.patching import ArcticPatch\nfrom host.config import Config\n\n\n"
              "class ConfigPatch(ArcticPatch[Config]):\n    def __init__(self):\n        self.x = 2\n")
    host = {"host/config.py": config, "host/core.py": core}
    files = {"plug/patch.py": plugin, **PATCHING}
    assert not run_scan(host, host, files, checks=(LoadTimingCheck(),)).findings
    built = run_scan(host, host, files, checks=(LoadTimingCheck(),), plugin_loaders=("boot_plugins",))
    assert [(f.code, f.level, f.status, f.args["built"], f.args["loaded"]) for f in built.findings] == [
        ("PP1101", Severity.WARNING, Status.LATENT, 5, 6)]
    assert [(s.path, s.line) for s in built.findings[0].sites] == [("host/core.py", 5), ("host/core.py", 6)]

    flags = "def __getattr__(name):\n    return _TABLE[name]()\n\n\n_TABLE = {\n    'HOST_A': lambda: 1,\n}\n"
    uses = "import host.flags as flags\n\nX = flags.HOST_GONE\n"
    old, new = {"host/flags.py": flags.replace("'HOST_A'", "'HOST_GONE'")}, {"host/flags.py": flags}
    gone = run_scan(old, new, {"plug/use.py": uses}, checks=(HostKindsCheck(),), env_module="flags")
    expect(gone, ["PP0612 error drift <module>:3"], at=True)
    assert [f.subject for f in gone.findings] == ["host.flags.HOST_GONE"]
    assert not run_scan(old, new, {"plug/use.py": uses}, checks=(HostKindsCheck(),)).findings


def test_shared_facts_are_computed_once_per_scan(monkeypatch):
    """The plugin walk and the copies serve every check on both sides: one computation each."""
    import pinport.facts as facts_mod
    import pinport.scan as scan_mod

    calls = {"walk": 0, "copies": 0}
    walk, copies = facts_mod.walk_plugin, facts_mod.find_copies

    def counted_walk(*args, **kwargs):
        calls["walk"] += 1
        return walk(*args, **kwargs)

    def counted_copies(*args, **kwargs):
        calls["copies"] += 1
        return copies(*args, **kwargs)

    monkeypatch.setattr(facts_mod, "walk_plugin", counted_walk)
    monkeypatch.setattr(facts_mod, "find_copies", counted_copies)
    monkeypatch.setattr(scan_mod, "can_fork", lambda: False)  # one process: every call is counted here
    old = _ENGINE.format(imports="from abc import ABC", bases="(ABC)")
    new = old.replace("        self.scale = config.scale\n", "")
    result = run_scan({"host/engine.py": old}, {"host/engine.py": new}, {"plug/patch.py": _MIRROR, **PATCHING},
                      names=("attributes", "undefined", "host-kinds", "bypass", "mirrors", "forks", "copied-lines"))
    expect(result, ["PP1202 error drift"])
    assert calls == {"walk": 1, "copies": 1}
