"""Patch discovery: every patching idiom becomes the right record with the right host path."""

from dataclasses import replace
from pathlib import Path

from harness import SYNTHETIC, inline_tree
from pinport.config import Settings
from pinport.model.index import load_index
from pinport.plugin.model import PluginModel, load_plugin_model
from pinport.plugin.records import Guard, PatchKind
from scenarios import PATCHING


def model(tmp_path: Path, files: dict[str, str], **settings) -> PluginModel:
    tree = inline_tree(tmp_path, "plug", "plugin", {**PATCHING, **files})
    config = replace(Settings(host="host", plugin_package="plug", **SYNTHETIC), **settings)
    return load_plugin_model(load_index(tree, workers=1), config)


def patches(m: PluginModel, kind: PatchKind | None = None) -> list[tuple[str, str, str]]:
    """(kind, owner, name) of every patch, in discovery order."""
    return [(p.kind.value, p.owner, p.name) for p in m.surface.patches if kind is None or p.kind is kind]


def assignments(m: PluginModel) -> dict[str, str]:
    """host target path -> replacement function name ('' when unknown)."""
    return {p.target: p.function.name if p.function else "" for p in m.surface.patches
            if p.kind is PatchKind.ASSIGNMENT}


# -- patch classes -------------------------------------------------------------------------------

def test_patch_class_with_class_target(tmp_path):
    m = model(tmp_path, {"plug/runner.py": """
        from host.worker.runner import Runner
        from plug.patching import ArcticPatch

        class RunnerPatch(ArcticPatch[Runner]):
            _orig_init = Runner.__init__
            LIMIT = 4

            def __init__(self, cfg):
                self._orig_init(cfg)

            def step(self, x, *, y=None):
                pass
    """})
    [target] = m.surface.targets
    assert (target.plugin_class, target.plugin_module, target.target, target.is_patch) == (
        "RunnerPatch", "plug.runner", "host.worker.runner.Runner", True)
    assert (target.site.path, target.site.line) == ("plug/runner.py", 4)
    owner = "host.worker.runner.Runner"
    assert patches(m) == [("alias", owner, "__init__"), ("patch member", owner, "LIMIT"),
                          ("patch member", owner, "__init__"), ("patch member", owner, "step")]
    alias, limit, init, step = m.surface.patches
    assert (alias.alias_of, alias.local_name, alias.via, alias.site.unit) == (
        "host.worker.runner.Runner.__init__", "_orig_init", "RunnerPatch", "RunnerPatch")
    assert limit.function is None
    assert (step.site.line, step.site.unit, step.via, step.plugin_module) == (
        11, "RunnerPatch.step", "RunnerPatch", "plug.runner")
    assert [p.name for p in step.function.signature.params] == ["self", "x", "y"]
    assert step.target == "host.worker.runner.Runner.step"
    assert m.surface.provided() >= {f"{owner}.step", f"{owner}.LIMIT"}


def test_patch_class_with_module_target(tmp_path):
    m = model(tmp_path, {"plug/ps.py": """
        from host.distributed import parallel_state
        from plug.patching import ArcticPatch

        class ParallelStatePatch(ArcticPatch[parallel_state]):
            def graph_capture(device):
                pass
    """})
    assert [t.target for t in m.surface.targets] == ["host.distributed.parallel_state"]
    assert patches(m) == [("patch member", "host.distributed.parallel_state", "graph_capture")]


def test_custom_patch_helper(tmp_path):
    files = {"plug/p.py": """
        from host.runner import Runner
        from plug import helpers
        class RunnerPatch(helpers.Patcher[Runner]):
            def step(self): pass
    """}
    assert patches(model(tmp_path / "a", files)) == []  # not a helper the settings name
    m = model(tmp_path / "b", files, patch_helpers=("Patcher",))
    assert [(t.target, t.is_patch) for t in m.surface.targets] == [("host.runner.Runner", True)]
    assert patches(m) == [("patch member", "host.runner.Runner", "step")]


def test_patch_class_on_a_plugin_class_is_not_a_host_target(tmp_path):
    m = model(tmp_path, {"plug/p.py": """
        from plug.patching import ArcticPatch
        from plug.own import Mine
        class MinePatch(ArcticPatch[Mine]):
            def f(self): pass
    """, "plug/own.py": "class Mine: pass\n"})
    assert m.surface.targets == [] and m.surface.patches == []


# -- subclasses and aliases ----------------------------------------------------------------------

def test_subclass_override(tmp_path):
    m = model(tmp_path, {"plug/sub.py": """
        import host.worker.runner as runner_mod
        from host.base import Base, Mixin

        class MyRunner(runner_mod.Runner, Mixin):
            def step(self):
                pass

        class Plain:
            def step(self):
                pass
    """})
    assert [(t.plugin_class, t.target, t.is_patch) for t in m.surface.targets] == [
        ("MyRunner", "host.worker.runner.Runner", False), ("MyRunner", "host.base.Mixin", False)]
    assert patches(m) == [("subclass override", "host.worker.runner.Runner", "step"),
                          ("subclass override", "host.base.Mixin", "step")]


def test_module_level_alias(tmp_path):
    m = model(tmp_path, {"plug/a.py": """
        from host.runner import Runner
        _orig_step = Runner.step
        local = 1
        def f():
            inner = Runner.other  # a function-local read, not an alias
    """})
    [alias] = m.surface.patches
    assert (alias.kind, alias.owner, alias.name, alias.local_name, alias.via, alias.site.unit) == (
        PatchKind.ALIAS, "host.runner.Runner", "step", "_orig_step", "", "<module>")


# -- assignments ---------------------------------------------------------------------------------

def test_module_level_assignment(tmp_path):
    m = model(tmp_path, {"plug/a.py": """
        from host.runner import Runner
        Runner.step = new_step
        Runner.flag = False
        def new_step(self, x):
            pass
    """})
    assert assignments(m) == {"host.runner.Runner.step": "new_step", "host.runner.Runner.flag": ""}
    step = m.surface.patches[0]
    assert (step.site.line, step.site.unit, step.function.line) == (2, "<module>", 4)


def test_assignment_in_a_monkey_patch_function_with_local_imports(tmp_path):
    m = model(tmp_path, {"plug/a.py": """
        def new_step(self):
            pass

        def monkey_patch():
            from host.runner import Runner
            import host.worker.helpers as helpers

            def local_helper():
                pass

            Runner.step = new_step
            helpers.compute = local_helper

        Runner.never = 1  # Runner is not bound at module level
    """})
    assert assignments(m) == {"host.runner.Runner.step": "new_step",
                              "host.worker.helpers.compute": "local_helper"}
    assert {p.site.unit for p in m.surface.patches} == {"monkey_patch"}
    assert [(i.path, i.is_module_import, i.guard) for i in m.surface.imports] == [
        ("host.runner.Runner", False, Guard.FUNCTION), ("host.worker.helpers", True, Guard.FUNCTION)]


def test_assignment_through_module_alias_and_full_path(tmp_path):
    m = model(tmp_path, {"plug/a.py": """
        import host.mod as m
        import host.a.b
        from host.distributed import parallel_state as ps

        def f(): pass

        m.func = f
        host.a.b.func = f
        ps._PP = None
    """})
    assert assignments(m) == {"host.mod.func": "f", "host.a.b.func": "f",
                              "host.distributed.parallel_state._PP": ""}


def test_wrapped_assignment_and_setattr(tmp_path):
    m = model(tmp_path, {"plug/a.py": """
        from host.runner import Runner

        def make(): pass
        def build(cls): pass
        def step(self): pass

        Runner.make = staticmethod(make)
        Runner.build = classmethod(build)
        setattr(Runner, "step", step)
        setattr(Runner, "calc", lambda self, x=1: x)
        for name in ("a", "b"):
            setattr(Runner, name, step)  # computed name: skipped
        setattr(Runner, "prefix_" + "x", step)
    """})
    assert assignments(m) == {"host.runner.Runner.make": "make", "host.runner.Runner.build": "build",
                              "host.runner.Runner.step": "step", "host.runner.Runner.calc": "<lambda>"}
    wrappers = {p.name: p.wrapper for p in m.surface.patches}
    assert wrappers == {"make": "staticmethod", "build": "classmethod", "step": "", "calc": ""}
    calc = m.surface.patches[3]
    assert [p.name for p in calc.function.signature.params] == ["self", "x"]


def test_local_names_shadow_module_imports(tmp_path):
    m = model(tmp_path, {"plug/a.py": """
        from host.runner import Runner
        def f(Runner):
            Runner.step = 1
        def g(*Runner):
            Runner.step = 2
        def h():
            Runner = make()
            Runner.step = 3
        def k():
            Runner.step = 4
    """})
    assert [(p.site.unit, p.target) for p in m.surface.patches] == [("k", "host.runner.Runner.step")]


def test_assignments_to_plugin_names_are_not_patches(tmp_path):
    m = model(tmp_path, {"plug/a.py": """
        from plug.other import Local
        import os
        class K: pass
        K.x = 1
        Local.y = 2
        os.environ_thing = 3
    """, "plug/other.py": "class Local: pass\n"})
    assert m.surface.patches == []


# -- guards --------------------------------------------------------------------------------------

def test_import_guards(tmp_path):
    m = model(tmp_path, {"plug/a.py": """
        from typing import TYPE_CHECKING
        import host.plain
        try:
            from host.opt import Fast
        except ImportError:
            Fast = None
        try:
            from host.other import Thing
        except ValueError:
            pass
        try:
            import host.bare
        except:
            pass
        if TYPE_CHECKING:
            from host.config import Config
        else:
            from host.runtime import Runtime
        if vllm_version_is("0.9.2"):
            from host.old import Old
        else:
            from host.new import New
        def f():
            from host.local import Local
            try:
                from host.local import Both
            except (AttributeError, ImportError):
                pass
    """})
    assert [(i.path, i.guard) for i in m.surface.imports] == [
        ("host.plain", Guard.NONE), ("host.opt.Fast", Guard.TRY), ("host.other.Thing", Guard.NONE),
        ("host.bare", Guard.FALLBACK), ("host.config.Config", Guard.TYPE_CHECKING),
        ("host.runtime.Runtime", Guard.NONE), ("host.old.Old", Guard.VERSION), ("host.new.New", Guard.VERSION),
        ("host.local.Local", Guard.FUNCTION), ("host.local.Both", Guard.FALLBACK)]
    # a probe: the handler carries on and nothing reads the names after it (`Fast = None` keeps a stand-in)


def test_patches_carry_guards(tmp_path):
    m = model(tmp_path, {"plug/a.py": """
        from host.runner import Runner
        from plug.patching import ArcticPatch
        try:
            class RunnerPatch(ArcticPatch[Runner]):
                def step(self): pass
        except ImportError:
            pass
        if TYPE_CHECKING:
            Runner.typed = 1
    """})
    # the patch is not installed where the import fails, and nothing uses the class after: a probe
    assert [t.guard for t in m.surface.targets] == [Guard.FALLBACK]
    assert [(p.name, p.guard) for p in m.surface.patches] == [("step", Guard.FALLBACK), ("typed", Guard.TYPE_CHECKING)]


# -- plugin re-exports and host uses ---------------------------------------------------------------

def test_plugin_re_exports_resolve_to_host_paths(tmp_path):
    m = model(tmp_path, {
        "plug/__init__.py": "from host.worker.runner import Runner\n",
        "plug/compat.py": "from plug import Runner as CompatRunner\nfrom host.envs import VLLM_X\n",
        "plug/user.py": """
            from plug import Runner
            from .compat import CompatRunner
            from plug.patching import ArcticPatch
            class A(ArcticPatch[Runner]):
                def step(self): pass
            class B(CompatRunner):
                def other(self): pass
        """,
    })
    assert [t.target for t in m.surface.targets] == ["host.worker.runner.Runner"] * 2
    assert m.names.binding_path("plug.user", "CompatRunner") == "host.worker.runner.Runner"
    assert m.names.binding_path("plug.compat", "VLLM_X") == "host.envs.VLLM_X"
    assert m.names.binding_path("plug.user", "A") == "plug.user.A"
    assert m.names.binding_path("plug", "compat") == "plug.compat"
    assert m.names.binding_path("plug.user", "nothing") is None
    # only the module that imports from the host records a host import
    assert sorted(i.path for i in m.surface.imports) == ["host.envs.VLLM_X", "host.worker.runner.Runner"]


def test_plugin_re_export_cycle_terminates(tmp_path):
    m = model(tmp_path, {"plug/a.py": "from plug.b import X\n", "plug/b.py": "from plug.a import X\nX.y = 1\n"})
    assert m.surface.patches == [] and m.names.binding_path("plug.a", "X") == "plug.a.X"


def test_host_uses_longest_chain_only(tmp_path):
    m = model(tmp_path, {"plug/a.py": """
        import host.envs as envs
        from host.forward_context import get_forward_context
        from host.runner import Runner

        def f(self):
            if envs.VLLM_USE_X:
                mode = envs.VLLM_MODE.lower()
            ctx = get_forward_context()
            n = ctx.attn_metadata  # ctx is a local value, not a host name
            self.positions.gpu[0] = 1
            return Runner.step(self), envs.VLLM_A.b.c
    """})
    assert sorted((u.path, u.base) for u in m.surface.uses) == [
        ("host.envs.VLLM_A.b.c", "host.envs.VLLM_A.b"),
        ("host.envs.VLLM_MODE.lower", "host.envs.VLLM_MODE"),
        ("host.envs.VLLM_USE_X", "host.envs"),
        ("host.runner.Runner.step", "host.runner.Runner"),
    ]
    use = next(u for u in m.surface.uses if u.path == "host.envs.VLLM_USE_X")
    assert (use.site.line, use.site.unit) == (6, "f")


def test_call_arguments_are_still_visited(tmp_path):
    m = model(tmp_path, {"plug/a.py": """
        import host.envs as envs
        from host.logger import init_logger
        logger = init_logger(envs.VLLM_NAME).info
    """})
    assert "host.envs.VLLM_NAME" in {u.path for u in m.surface.uses}


# -- module selection ----------------------------------------------------------------------------

def test_skip_excludes_sub_packages_only(tmp_path):
    m = model(tmp_path, {
        "plug/tests/test_x.py": "from host.runner import Runner\nRunner.a = 1\n",
        "plug/tests/deep/more.py": "from host.runner import Runner\nRunner.b = 1\n",
        "plug/tests_helpers.py": "from host.runner import Runner\nRunner.c = 1\n",
        "plug/core.py": "from host.runner import Runner\nRunner.d = 1\n",
    }, skip=("tests",))
    assert "plug.tests" not in m.modules and "plug.tests.deep.more" not in m.modules
    assert "plug.tests_helpers" in m.modules
    assert sorted(p.name for p in m.surface.patches) == ["c", "d"]


def test_syntax_error_in_one_file_does_not_stop_discovery(tmp_path):
    m = model(tmp_path, {
        "plug/a_broken.py": "from host.runner import Runner\ndef oops(:\n",
        "plug/b_fine.py": "from host.runner import Runner\nRunner.step = 1\n",
    })
    assert "plug.a_broken" in m.modules
    assert m.index.modules["plug.a_broken"].syntax_error.startswith("line 2")
    assert patches(m) == [("assignment", "host.runner.Runner", "step")]
