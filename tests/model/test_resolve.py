"""Resolver: re-exports, submodules, `*` imports, lazy exports, cycles, MRO and class members."""

import pytest

from harness import load_inline_resolver
from pinport.model.resolve import (
    ATTRIBUTE,
    CLASS,
    EXTERNAL,
    FUNCTION,
    INSTANCE_ATTR,
    LAZY,
    METHOD,
    MODULE,
    OPAQUE,
)


def test_definitions_and_kinds(tmp_path):
    r = load_inline_resolver(tmp_path, {"host/mod.py": """
        import logging
        logger = logging.getLogger(__name__)
        def fn(): pass
        class K:
            def meth(self): pass
    """})
    assert (r.resolve("host.mod").kind, r.resolve("host").kind) == (MODULE, MODULE)
    fn = r.resolve("host.mod.fn")
    assert (fn.kind, fn.path, fn.module, fn.line) == (FUNCTION, "host.mod.fn", "host.mod", 3)
    meth = r.resolve("host.mod.K.meth")
    assert (meth.kind, meth.owner, meth.line) == (METHOD, "host.mod.K", 5)
    assert r.resolve("host.mod.logger").kind == ATTRIBUTE
    assert r.resolve("host.mod.missing") is None
    assert r.resolve("host.nomod.X") is None
    assert r.resolve("torch.nn.Module").kind == EXTERNAL


def test_re_export_chain_across_packages(tmp_path):
    r = load_inline_resolver(tmp_path, {
        "host/core/impl.py": "class Engine: pass\n",
        "host/core/__init__.py": "from .impl import Engine\n",
        "host/api/__init__.py": "from host.core import Engine as PublicEngine\n",
        "host/__init__.py": "from host.api import PublicEngine\n",
    })
    for path in ("host.PublicEngine", "host.api.PublicEngine", "host.core.Engine"):
        sym = r.resolve(path)
        assert (sym.kind, sym.path, sym.module) == (CLASS, "host.core.impl.Engine", "host.core.impl")


def test_submodules(tmp_path):
    r = load_inline_resolver(tmp_path, {
        "host/pkg/__init__.py": "from . import sub\n",
        "host/pkg/sub.py": "X = 1\n",
        "host/pkg/other.py": "Y = 2\n",
        "host/user.py": "import host.pkg.other\nfrom host.pkg import sub as s\n",
    })
    assert r.resolve("host.pkg.sub").kind == MODULE
    assert r.resolve("host.pkg.sub.X").path == "host.pkg.sub.X"
    assert r.resolve("host.pkg.other").kind == MODULE  # never imported by the package, still a module
    assert r.resolve_in("host.user", "host.pkg.other.Y").path == "host.pkg.other.Y"
    assert r.resolve_in("host.user", "s.X").path == "host.pkg.sub.X"


def test_star_import_chain_with_all_and_privacy(tmp_path):
    r = load_inline_resolver(tmp_path, {
        "host/base.py": "__all__ = ['Exported']\nclass Exported: pass\nclass NotListed: pass\n",
        "host/plain.py": "class Public: pass\nclass _Private: pass\n",
        "host/mid.py": "from host.base import *\nfrom host.plain import *\n",
        "host/top.py": "from host.mid import *\n",
    })
    assert r.resolve("host.top.Exported").path == "host.base.Exported"
    assert r.resolve("host.top.Public").path == "host.plain.Public"
    assert r.resolve("host.top.NotListed") is None
    assert r.resolve("host.top._Private") is None
    assert r.resolve("host.plain._Private") is not None


def test_lazy_exports(tmp_path):
    r = load_inline_resolver(tmp_path, {
        "host/__init__.py": """
            MODULE_ATTRS = {"Engine": ".engine.core:Engine", "Gone": ".engine.core:Gone"}
            def __getattr__(name):
                if name in MODULE_ATTRS:
                    return 1
                if name == "Shim":
                    return 2
                raise AttributeError(name)
        """,
        "host/engine/core.py": "class Engine: pass\n",
    })
    engine = r.resolve("host.Engine")
    assert (engine.kind, engine.path) == (CLASS, "host.engine.core.Engine")
    gone = r.resolve("host.Gone")  # the table names it, the target does not exist: still served
    assert (gone.kind, gone.module, gone.line) == (LAZY, "host", 2)
    assert r.resolve("host.Shim").kind == LAZY
    assert r.resolve("host.Shim.anything").kind == LAZY
    assert r.resolve("host.Nope") is None


@pytest.mark.parametrize("files", [
    {"host/a.py": "from host.b import X\n", "host/b.py": "from host.a import X\n"},
    {"host/a.py": "from host.b import *\n", "host/b.py": "from host.a import *\n"},
    {"host/a.py": "from host.a import X\n"},
    {"host/__init__.py": "def __getattr__(n):\n    return T[n]\nT = {'X': 'host.a:X'}\n",
     "host/a.py": "from host import X\n"},
])
def test_cycles_terminate_unresolved(tmp_path, files):
    r = load_inline_resolver(tmp_path, files)
    assert r.resolve("host.a.X") is None or r.resolve("host.a.X").kind == LAZY
    assert r.resolve("host.a.Y") is None


def test_star_cycle_still_finds_names_defined_in_the_cycle(tmp_path):
    r = load_inline_resolver(tmp_path, {"host/a.py": "from host.b import *\nA = 1\n",
                            "host/b.py": "from host.a import *\nB = 2\n"})
    assert r.resolve("host.a.B").path == "host.b.B"
    assert r.resolve("host.b.A").path == "host.a.A"


DIAMOND = {
    "host/base.py": """
        class Root:
            def who(self): pass
            def root_only(self): pass
    """,
    "host/left.py": """
        from host.base import Root
        class Left(Root):
            def who(self): pass
    """,
    "host/right.py": """
        from host.base import Root
        class Right(Root):
            def who(self): pass
            def right_only(self): pass
    """,
    "host/leaf.py": """
        from host.left import Left
        from host.right import Right
        class Leaf(Left, Right):
            pass
    """,
}


def test_mro_diamond_is_c3(tmp_path):
    r = load_inline_resolver(tmp_path, DIAMOND)
    leaf = r.resolve("host.leaf.Leaf")
    assert [s.path for s in r.mro(leaf)] == [
        "host.leaf.Leaf", "host.left.Left", "host.right.Right", "host.base.Root"]
    assert r.class_member(leaf, "who").owner == "host.left.Left"
    assert r.class_member(leaf, "right_only").owner == "host.right.Right"
    assert r.class_member(leaf, "root_only").owner == "host.base.Root"
    assert r.resolve("host.leaf.Leaf.right_only").kind == METHOD
    assert r.class_member(leaf, "nowhere") is None
    assert not r.has_external_base(leaf)


def test_mro_of_inheritance_cycle_terminates(tmp_path):
    r = load_inline_resolver(tmp_path, {"host/a.py": "from host.b import B\nclass A(B): pass\n",
                            "host/b.py": "from host.a import A\nclass B(A): pass\n"})
    assert [s.path for s in r.mro(r.resolve("host.a.A"))][:2] == ["host.a.A", "host.b.B"]
    assert r.class_member(r.resolve("host.a.A"), "x") is None


def test_instance_members_from_a_base(tmp_path):
    r = load_inline_resolver(tmp_path, {
        "host/base.py": """
            class Base:
                __slots__ = ("slot",)
                def __init__(self):
                    self.positions = make()
        """,
        "host/child.py": """
            from host.base import Base
            class Child(Base):
                LIMIT = 3
        """,
    })
    child = r.resolve("host.child.Child")
    assert r.class_member(child, "positions") is None
    pos = r.class_member(child, "positions", instance=True)
    assert (pos.kind, pos.owner, pos.line, pos.obj.method) == (
        INSTANCE_ATTR, "host.base.Base", 4, "__init__")
    assert r.class_member(child, "slot", instance=True).kind == INSTANCE_ATTR
    assert r.class_member(child, "LIMIT").kind == ATTRIBUTE


def test_external_base_makes_unknown_members_external(tmp_path):
    r = load_inline_resolver(tmp_path, {"host/layer.py": """
        import torch
        from torch import nn
        class Layer(torch.nn.Module):
            def forward(self): pass
        class Other(nn.Linear):
            pass
    """})
    layer = r.resolve("host.layer.Layer")
    assert r.class_member(layer, "forward").kind == METHOD
    unknown = r.class_member(layer, "register_buffer")
    assert (unknown.kind, unknown.owner) == (EXTERNAL, "torch.nn.Module")
    assert r.resolve("host.layer.Other.weight").kind == EXTERNAL
    assert r.has_external_base(layer)


@pytest.mark.parametrize("base", ["Generic[T]", "typing.Generic[T]", "Protocol", "typing.Protocol",
                                  "Base[int]", "Base[int], Protocol"])
def test_generic_and_protocol_bases_add_no_unknown_members(tmp_path, base):
    r = load_inline_resolver(tmp_path, {"host/mod.py": f"""
        import typing
        from typing import Generic, Protocol, TypeVar
        T = TypeVar("T")
        class Base(Generic[T]):
            def step(self): pass
        class K({base}):
            def own(self): pass
    """})
    k = r.resolve("host.mod.K")
    assert r.class_member(k, "missing") is None  # known to be absent, not "unknown"
    assert r.resolve("host.mod.K.missing") is None
    assert not r.has_external_base(k)
    assert [s.kind for s in r.mro(k)] == [CLASS] * len(r.mro(k))
    assert r.class_member(k, "own").kind == METHOD
    assert (r.class_member(k, "step") is not None) == base.startswith("Base")


def test_base_that_is_not_a_class_makes_members_unknown(tmp_path):
    r = load_inline_resolver(tmp_path, {"host/mod.py": """
        from host.factory import make_base
        Base = make_base()
        class K(Base):
            pass
    """, "host/factory.py": "def make_base(): pass\n"})
    member = r.resolve("host.mod.K.anything")
    assert member is not None and member.kind == EXTERNAL


def test_unresolved_in_tree_base_makes_members_external(tmp_path):
    r = load_inline_resolver(tmp_path, {"host/mod.py": "from host.gone import Base\nclass K(Base):\n    pass\n"})
    assert r.resolve("host.mod.K.x").kind == EXTERNAL


def test_members_of_values_are_opaque(tmp_path):
    r = load_inline_resolver(tmp_path, {"host/mod.py": """
        from host.logger import init_logger
        logger = init_logger(__name__)
    """, "host/logger.py": "def init_logger(name): pass\n"})
    info = r.resolve("host.mod.logger.info")
    assert (info.kind, info.path) == (OPAQUE, "host.mod.logger.info")
    assert r.resolve_in("host.mod", "init_logger").path == "host.logger.init_logger"


def test_type_checking_only_binding_still_resolves(tmp_path):
    r = load_inline_resolver(tmp_path, {"host/mod.py": """
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from host.config import Config
    """, "host/config.py": "class Config: pass\n"})
    sym = r.resolve("host.mod.Config")
    assert (sym.kind, sym.path) == (CLASS, "host.config.Config")


def test_resolve_in_module_namespace(tmp_path):
    r = load_inline_resolver(tmp_path, {
        "host/distributed/parallel_state.py": "class GroupCoordinator:\n    def all_gather(self): pass\n",
        "host/user.py": "from host.distributed import parallel_state\nimport host.distributed as dist\n",
    })
    assert r.resolve_in("host.user", "parallel_state.GroupCoordinator.all_gather").kind == METHOD
    assert r.resolve_in("host.user", "dist.parallel_state").kind == MODULE
    assert r.resolve_in("host.user", "object").kind == EXTERNAL
    assert r.resolve_in("host.user", "undefined_name") is None
    assert r.file_line(r.resolve("host.distributed.parallel_state.GroupCoordinator")) == (
        "host/distributed/parallel_state.py", 1)


def test_memoised_results_are_stable(tmp_path):
    r = load_inline_resolver(tmp_path, DIAMOND)
    assert r.resolve("host.leaf.Leaf") is r.resolve("host.leaf.Leaf")
