"""Layout-blind text comparison used by mirror, fork and copied-line detection."""

from pinport.plugin.similarity import (
    block_ratio,
    code_like,
    code_names,
    debugging_module,
    getattr_guards,
    import_bindings,
    imports_only,
    line_delta,
    line_tokens,
    normalise,
    parameter_defaults,
    prose_words,
    read_names,
    runtime_form,
    token_ratio,
)


def test_tokens_drop_comments_and_layout():
    assert line_tokens("x = f(a, '#no')  # note") == ["x", "=", "f", "(", "a", ",", "'#no'", ")"]
    assert normalise("  key_cache,value_cache = kv_cache.unbind( 0 )") == \
        normalise("key_cache, value_cache = kv_cache.unbind(0)  # layout")


def test_kept_changed_added_lines():
    delta = line_delta(["a = 1", "b = 2", "c = 3"], ["a = 1", "b = 20", "x = 0", "c = 3"], 10, 1)
    assert delta.kept == (10, 12) and delta.changed == (11,) and delta.added == (2, 3) and delta.dropped == ()


def test_ratios_ignore_layout_and_see_content():
    a = [line_tokens("x = f(a, b)"), line_tokens("return x")]
    b = [line_tokens("x = f( a,b )  # same"), line_tokens("return x")]
    assert block_ratio(a, b) == 1.0
    assert token_ratio(line_tokens("x = f(a, b)"), line_tokens("y = g(c)")) < 0.5


def test_runtime_form_ignores_what_running_code_ignores():
    """Docstrings, annotations, asserts, typing casts, log message text and layout change nothing that runs."""
    before = "def step(self, batch, n=1):\n    out = []\n    logger.info('step %d', n)\n    return out\n"
    same = ('def step(self, batch: list,\n         n: int = 1) -> list:\n    """Run one batch."""\n'
            '    out: list = []\n    assert batch is not None\n    logger.info("stepping %d items", len(batch))\n'
            '    total: int\n    out = cast(list, out)\n    return cast(list, out)\n')
    assert runtime_form(before) is not None and runtime_form(before) == runtime_form(same)


def test_runtime_form_sees_every_running_change():
    before = "def step(self, batch, n=1):\n    out = []\n    logger.info('step %d', n)\n    return out\n"
    for changed in (before.replace("n=1", "n=2"),  # a default
                    before.replace("out = []", "out = [n]"),  # a value
                    before.replace("logger.info", "print"),  # a call that is not a log call
                    before.replace("return out", "return tuple(out)"),
                    before.replace("self, batch, n=1", "self, batch, *, n=1")):  # a parameter kind
        assert runtime_form(changed) != runtime_form(before), changed
    # an annotation in a class body makes a dataclass field: it runs
    assert runtime_form("@dataclass\nclass C:\n    x = 0\n") != runtime_form("@dataclass\nclass C:\n    x: int = 0\n")
    assert runtime_form("def f(:\n") is None  # what does not parse on its own is never judged cosmetic


def test_speed_form_ignores_what_changes_only_speed():
    """Memory pinning, a dense copy and torch._dynamo's shape hints change how fast code runs, not its values."""
    before = "def f(t):\n    cpu = torch.empty_like(t, device='cpu')\n    return g(cpu)\n"
    same = ("def f(t):\n    torch._dynamo.decorators.mark_unbacked(t, 0)\n"
            "    cpu = torch.empty_like(t, device='cpu', pin_memory=PIN_MEMORY)\n    return g(cpu.contiguous())\n")
    assert runtime_form(before, speed=True) == runtime_form(same, speed=True)
    assert runtime_form(before) != runtime_form(same)  # they run differently


def test_speed_form_sees_every_change_of_values():
    before = "def f(t):\n    cpu = t.to('cpu')\n    return g(cpu)\n"
    for changed in (before.replace("t.to('cpu')", "t.to('cpu', non_blocking=True)"),  # read before it lands
                    before.replace("g(cpu)", "g(cpu.contiguous(memory_format=fmt))"),  # a layout the callee sees
                    before.replace("return g(cpu)", "mark_unbacked(t, 0)\n    return g(cpu)")):  # not torch's hint
        assert runtime_form(changed, speed=True) != runtime_form(before, speed=True), changed


def test_speed_form_drops_blocks_of_debug_context_managers():
    """A `with` of context managers imported from a debugging module runs its body as without them."""
    plain = "def f(t):\n    n = t.sum().item()\n    return n\n"
    guarded = "def f(t):\n    with sync_allowed():\n        n = t.sum().item()\n    return n\n"
    assert runtime_form(guarded, speed=True, debug=frozenset({"sync_allowed"})) == runtime_form(plain, speed=True)
    assert runtime_form(guarded, speed=True) != runtime_form(plain, speed=True)  # not a debug name: it may matter
    for other in (guarded.replace("sync_allowed():", "sync_allowed() as s:"),  # the body may use what it yields
                  guarded.replace("sync_allowed():", "sync_allowed(), lock:")):  # with a lock beside it
        assert runtime_form(other, speed=True, debug=frozenset({"sync_allowed"})) != runtime_form(plain, speed=True)
    assert debugging_module("vllm.utils.gpu_sync_debug") and not debugging_module("vllm.forward_context")


def _same_refactored(a: str, b: str) -> bool:
    return runtime_form(a, refactor=True) == runtime_form(b, refactor=True)


def test_refactor_form_inlines_locals_bound_to_reads_and_drops_guards():
    """A local bound once to a pure read computes what the read inlined computes; a getattr guard reads the
    attribute whenever it is there."""
    inlined = "def f(self, out, lens):\n    return out.last.split(lens.tolist())\n"
    bound = "def f(self, out, lens):\n    feats = out.last\n    return feats.split(lens.tolist())\n"
    assert _same_refactored(bound, inlined) and runtime_form(bound) != runtime_form(inlined)
    guarded = ("def f(cfg, i):\n    h = None\n    if getattr(cfg, 'kinds', []) and cfg.kinds[i] == cfg.other['t']:\n"
               "        h = cfg.other['n']\n        g = cfg.other['g']\n    return g(h)\n")
    hoisted = ("def f(cfg, i):\n    h = None\n    other = cfg.other\n    kinds = cfg.kinds\n"
               "    if kinds and kinds[i] == other['t']:\n        h = other['n']\n        g = other['g']\n    return g(h)\n")
    assert _same_refactored(guarded, hoisted)
    chained = "def f(self):\n    x = self.a.b\n    y = x.c\n    return y.d + x.e\n"
    assert _same_refactored(chained, "def f(self):\n    return self.a.b.c.d + self.a.b.e\n")
    looped = "def f(self):\n    xs = self.items\n    for x in xs:\n        g(x)\n"  # the iterable is read once
    assert _same_refactored(looped, "def f(self):\n    for x in self.items:\n        g(x)\n")
    augmented = "def f(self):\n    n = self.config.n\n    self.steps += n\n"  # the value is read before the store
    assert _same_refactored(augmented, "def f(self):\n    self.steps += self.config.n\n")
    assert getattr_guards(guarded) == {"getattr(cfg, 'kinds', [])": 1} and getattr_guards(hoisted) == {}
    assert getattr_guards("def f(:\n") is None


def test_refactor_form_keeps_a_read_moved_across_what_may_change_it():
    """A read inlined past a call, a store, a new binding or a later loop iteration may give another value."""
    for bound, inlined in (
            ("x = self.a\n    self.update()\n    return x", "self.update()\n    return self.a"),  # a call between
            ("x = self.a\n    return g(), x", "return g(), self.a"),  # a call before the use in its statement
            ("x = self.a\n    return f(x) if g() else 0", "return f(self.a) if g() else 0"),  # the test runs first
            ("x = self.a\n    return {g(): x}", "return {g(): self.a}"),  # the key is evaluated first
            ("x = self.a\n    return [x for _ in g()]", "return [self.a for _ in g()]"),  # the loop's call first
            ("x = self.a\n    self.items[g()] += x", "self.items[g()] += self.a"),  # the index's call first
            ("x = self.a\n    self.a = 2\n    return x", "self.a = 2\n    return self.a"),  # a store between
            ("x = self.a\n    for i in y:\n        g(x)", "for i in y:\n        g(self.a)"),  # read again after g
            ("x = self.a\n    return lambda: x", "return lambda: self.a"),  # read when the lambda runs
            ("x = self.a\n    if c:\n        x = 3\n    return x", "if c:\n        x = 3\n    return self.a"),
            ("x = self\n    self = y\n    return x.a", "self = y\n    return self.a"),  # the root rebound
            ("x = self.a()\n    return x", "return self.a()")):  # a call, not a read
        assert not _same_refactored(f"def f(self):\n    {bound}\n", f"def f(self):\n    {inlined}\n"), bound
    assert not _same_refactored("x = self.a\nprint(x)\n", "print(self.a)\n")  # a module global others may import


def test_prose_words_and_code_names_tell_words_from_code():
    text = ('def f(x):\n    """Unlike forward_qkv, split here."""\n    y = x.split(2)  # see MultiHeadAttention\n'
            '    return g(y, mode="fast_path")\n')
    assert prose_words(text) >= {"forward_qkv", "MultiHeadAttention", "fast_path", "Unlike", "split"}
    assert code_names(text) == {"f", "x", "y", "split", "g", "mode"} and code_names("def f(:\n") is None
    assert [w for w in ("forward_qkv", "MultiHeadAttention", "fp8", "source", "_private", "Blocks") if code_like(w)] == [
        "forward_qkv", "MultiHeadAttention", "fp8"]
    assert prose_words("x = '''unterminated\n") >= {"unterminated"} or prose_words("x = '''unterminated\n") == set()


def test_runtime_form_without_parameters_and_the_parameter_defaults():
    a = "def f(self, batch, limit=1):\n    return batch[:limit]\n"
    b = "def f(self, batch, limit=1, hint=None):\n    return batch[:limit]\n"
    assert runtime_form(a) != runtime_form(b) and runtime_form(a, parameters=False) == runtime_form(b, parameters=False)
    assert runtime_form("f = lambda x: x\n", parameters=False) != runtime_form("f = lambda y: y\n", parameters=False)
    assert parameter_defaults(b) == [{"self": "positional ", "batch": "positional ", "limit": "positional 1",
                                      "hint": "positional None"}]
    assert parameter_defaults("def g(a, /, *args, b=2, **kw):\n    pass\n") == [
        {"a": "positional-only ", "args": "*", "b": "keyword-only 2", "kw": "**"}]


def test_a_none_default_refused_by_a_leading_raise_is_no_default():
    """`p=None` then `if p is None: raise` binds calls as a required `p` does (a call without it fails either way)."""
    required = "def f(self, *, source):\n    return source.read()\n"
    refused = "def f(self, *, source=None):\n    if source is None:\n        raise ValueError('no source')\n" \
              "    return source.read()\n"
    assert parameter_defaults(required) == parameter_defaults(refused)
    assert runtime_form(required, parameters=False) == runtime_form(refused, parameters=False)
    late = refused.replace("    if source", "    log(source)\n    if source")  # the None default is used first
    defaulted = refused.replace("raise ValueError('no source')", "source = open_default()")  # a real default
    for other in (late, defaulted):
        assert parameter_defaults(other) != parameter_defaults(required)


def test_imports_only_tells_a_change_of_sources_from_a_change_of_code():
    before = "from vllm import _custom_ops as ops\n\n\ndef f(x):\n    return ops.g(x)\n"
    platform = ("from vllm.platforms import current_platform\n\nif current_platform.is_cuda_alike():\n"
                "    from vllm import _custom_ops as ops\nelse:\n    from vllm._ipex_ops import ipex_ops as ops\n\n\n"
                "def f(x):\n    return ops.g(x)\n")
    assert imports_only(before, platform) == (set(), {("current_platform", "vllm.platforms.current_platform"),
                                                      ("ops", "vllm._ipex_ops.ipex_ops")})
    assert imports_only(before, platform.replace("ops.g(x)", "ops.h(x)")) is None  # the code changed too
    assert imports_only(before, before) is None and imports_only(before, "def f(:\n") is None
    assert import_bindings("import a.b\nimport c.d as e\nfrom .x import y\nfrom z import *\n") == {
        ("a", "a"), ("e", "c.d"), ("y", ".x.y")}
    assert read_names(platform) >= {"current_platform", "ops", "x"} and "_custom_ops" not in read_names(platform)
