"""Units: the module body, classes and functions whose calls and facts the call checks read."""

import ast

from pinport.model.units import iter_units


def test_units_include_defs_inside_module_level_blocks():
    tree = ast.parse("try:\n    def f(cfg):\n        cfg.x()\nexcept ImportError:\n    pass\n"
                     "if TYPE_CHECKING:\n    import a\nelse:\n    def g():\n        pass\nwith ctx():\n    h()\n"
                     "class C:\n    if flag:\n        def m(self):\n            pass\n")
    units = {u.qualname: u for u in iter_units(tree)}
    assert set(units) == {"f", "g", "C.m", "C", "<module>"}
    module_calls = [n for stmt in units["<module>"].body for n in ast.walk(stmt) if isinstance(n, ast.Call)]
    assert sorted(ast.unparse(c.func) for c in module_calls) == ["ctx", "h"]
