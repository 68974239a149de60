"""Host type inference: annotation arity and names, return arity, and the callee of a call."""

import ast

import pytest

from harness import load_inline_resolver
from pinport.model.binding import BOUND, CONSTRUCT
from pinport.model.inference import annotation_arity, annotation_name, host_inference, return_arity
from pinport.model.resolve import CLASS, METHOD
from pinport.model.units import iter_units, walk_unit


@pytest.mark.parametrize(("text", "arity"), [
    ("tuple[int, int]", 2), ("Tuple[a, b, c]", 3), ("tuple[int, ...]", None), ("np.ndarray", 1),
    ("tuple[dict[str, int], list[int]]", 2), ("Foo", None), (None, None), ("'tuple[int, int]'", 2),
])
def test_annotation_arity(text, arity):
    assert annotation_arity(text) == arity


@pytest.mark.parametrize(("text", "plain", "arity"), [
    ("torch.Tensor | None", ("torch.Tensor",), 1),  # vLLM's host profile names torch's types
    ("acme.Blob", ("acme.Blob",), 1),  # another host's profile names its own
    ("torch.Tensor | None", (), None),  # negative twin: no profile, no torch knowledge in the code
    ("acme.Blob", ("torch.Tensor",), None),
])
def test_annotation_arity_of_the_host_s_plain_types(text, plain, arity):
    assert annotation_arity(text, plain) == arity


def test_vllm_s_plain_types_come_from_its_host_profile():
    from pinport.config import load_settings
    assert load_settings(None).plain_types == ("torch.Tensor", "Tensor", "torch.device", "torch.dtype")


@pytest.mark.parametrize(("text", "name"), [
    ("Runner", "Runner"), ("'Runner'", "Runner"), ("Runner | None", "Runner"), ("Optional[a.Runner]", "a.Runner"),
    ("Union[Runner, None]", "Runner"), ("list[Runner]", None), ("A | B", None), ("None", None),
])
def test_annotation_name(text, name):
    assert annotation_name(text) == name


def test_return_arity(tmp_path):
    r = load_inline_resolver(tmp_path, {"host/m.py": """
        def pair(a):
            return a, a
        def single(a) -> int:
            return a
        def unknown(a):
            return a
        def mixed(a):
            if a:
                return a, a
            return a, a, a
        def gen(a):
            yield a, a
        def nested(a):
            def inner():
                return 1
            return a, a
    """})
    arity = {n: return_arity(r.index, r.resolve(f"host.m.{n}")) for n in
             ("pair", "single", "unknown", "mixed", "gen", "nested")}
    assert arity == {"pair": 2, "single": 1, "unknown": None, "mixed": None, "gen": None, "nested": 2}


def test_inference_follows_annotations_constructors_and_attributes(tmp_path):
    r = load_inline_resolver(tmp_path, {
        "host/runner.py": """
            class Runner:
                def step(self, a):
                    pass
            def make() -> "Runner":
                return Runner()
        """,
        "host/worker.py": """
            from host.runner import Runner, make
            class Worker:
                def __init__(self):
                    self.runner: Runner = make()
                    self.other = Runner()
                def go(self, r: Runner | None):
                    from host.runner import make as build
                    x = build()
                    self.runner.step(1)
                    self.other.step(1)
                    r.step(1)
                    x.step(1)
                    make().step(1)
        """})
    tree = r.index.parsed("host.worker")
    unit = next(u for u in iter_units(tree) if u.qualname == "Worker.go")
    facts = walk_unit(r.index, "host.worker", unit)
    inf = host_inference(r, "host.worker", unit, facts)
    callees = [inf.callee(c.func) for c in facts.calls if isinstance(c.func, ast.Attribute)]
    assert [(c.sym.path, c.mode) for c in callees] == [("host.runner.Runner.step", BOUND)] * 5


def test_super_and_construct(tmp_path):
    r = load_inline_resolver(tmp_path, {"host/m.py": """
        class Base:
            def __init__(self, a):
                pass
        class Sub(Base):
            def __init__(self):
                super().__init__(1)
                Base(2)
    """})
    unit = next(u for u in iter_units(r.index.parsed("host.m")) if u.qualname == "Sub.__init__")
    facts = walk_unit(r.index, "host.m", unit)
    inf = host_inference(r, "host.m", unit, facts)
    first, second = (inf.callee(c.func) for c in facts.calls if c.func is not None and not (
        isinstance(c.func, ast.Name) and c.func.id == "super"))
    assert (first.sym.path, first.sym.kind, first.mode) == ("host.m.Base.__init__", METHOD, BOUND)
    assert (second.sym.path, second.sym.kind, second.mode) == ("host.m.Base", CLASS, CONSTRUCT)


def _method_callees(r, module, qualname):
    unit = next(u for u in iter_units(r.index.parsed(module)) if u.qualname == qualname)
    facts = walk_unit(r.index, module, unit)
    inf = host_inference(r, module, unit, facts)
    return [c and c.sym.path for c in (inf.callee(c.func) for c in facts.calls if isinstance(c.func, ast.Attribute))]


def test_a_declared_local_keeps_its_type_through_plain_rebinding(tmp_path):
    # `cfg: Config = ...` then `cfg = replace(cfg, ...)`: the declaration holds the rebinding to Config
    r = load_inline_resolver(tmp_path, {"host/m.py": """
        class Config:
            def digest(self, include_version=True):
                pass
        class Other:
            def digest(self):
                pass
        def replace(obj, **changes):
            return obj
        def declared(runner):
            cfg: Config = runner.config
            if runner.flag:
                cfg = replace(cfg, flag=False)
            cfg.digest(include_version=False)
        def undeclared(runner, a: Config):
            cfg = a
            cfg = replace(cfg, flag=False)
            cfg.digest(include_version=False)
        def declared_twice(a, b):
            cfg: Config = a
            cfg: Other = b
            cfg.digest()
    """})
    assert _method_callees(r, "host.m", "declared") == ["host.m.Config.digest"]
    # negative twins: without a declaration the rebinding by an unknown call makes it unknown, and two
    # declarations that disagree decide nothing
    assert _method_callees(r, "host.m", "undeclared") == [None]
    assert _method_callees(r, "host.m", "declared_twice") == [None]
