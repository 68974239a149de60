"""Call-site search: host calls to a name found through the text corpus, and calls that no longer bind."""

from harness import load_inline_resolver, signature
from pinport.model.callsites import (
    failing_call_lines,
    iter_call_sites,
    modules_subclassing,
    text_lines,
)


def test_call_sites_text_prefilter_and_order(tmp_path):
    r = load_inline_resolver(tmp_path, {
        "host/a.py": "def helper(x):\n    pass\n\n\ndef two():\n    helper(2)\n    helper(1)\n",
        "host/b.py": "from host.a import helper\n\n\ndef one():\n    helper(x=1)\n",
        "host/c.py": "def helper(x):\n    pass\n\n\ndef other():\n    helper(3)\n",  # another function
    })
    sites = list(iter_call_sites(r, "helper", lambda c: c.sym.path == "host.a.helper"))
    assert [(s.module, s.line, s.unit) for s in sites] == [("host.a", 6, "two"), ("host.a", 7, "two"),
                                                           ("host.b", 5, "one")]
    assert len(list(iter_call_sites(r, "helper", lambda c: True, limit=2))) == 2
    assert text_lines(r.index, "host.a", "helper(") == (1, 6, 7)


def test_failing_call_lines_read_arguments_from_text(tmp_path):
    r = load_inline_resolver(tmp_path, {"host/a.py": """
        def run(obj):
            obj.capture(1)
            obj.capture(1, ctx=")")  # a parenthesis in a string
            obj.capture(
                1,
                2,
            )
            obj.capture(*args)
    """})
    assert failing_call_lines(r.index, "host.a", "capture", signature("(a)"), method=True) == (3, 4, 8)
    assert failing_call_lines(r.index, "host.a", "capture", signature("(a, b=0, ctx=None)"), method=True) == (8,)


def test_modules_subclassing_keeps_every_module_whose_summary_lists_the_base(tmp_path):
    """The text prefilter of the host-subclass searches: every module a summary shows subclassing
    `Worker` (dotted, subscripted, over lines, nested, after a comment or a string holding a
    parenthesis) is kept; modules only mentioning the name (a call, an annotation, a string, a
    longer name) are not, so their summaries are never built for it."""
    r = load_inline_resolver(tmp_path, {
        "host/worker.py": "class Worker:\n    pass\n",
        "host/plain.py": "from host.worker import Worker\n\n\nclass Mine(Worker):\n    pass\n",
        "host/dotted.py": "import host.worker as w\n\n\nclass Mine(w.Worker, metaclass=type):\n    pass\n",
        "host/lines.py": ("from host.worker import Worker\n\n\nclass Mine(  # a comment (\n    dict,\n"
                          "    Worker[int],\n):\n    pass\n"),
        "host/nested.py": ("from host.worker import Worker\n\n\nclass Outer:\n    class Inner(\"x)\" and dict, Worker):\n"
                           "        pass\n"),
        "host/uses.py": ("from host.worker import Worker\n\n\nclass Holder(dict):\n    w: Worker\n\n\n"
                         "def make() -> Worker:\n    return Worker()\n\n\nclass WorkerBase(dict):\n    pass\n"),
        "host/named.py": "NAME = 'class X(Worker2)'\n\n\nclass Other(BigWorker):\n    pass\n",
    })
    index = r.index
    found = modules_subclassing(index, "Worker", "host")
    assert found == ("host.dotted", "host.lines", "host.nested", "host.plain")

    def bases(module: str) -> list[str]:
        out, todo = [], list(index.modules[module].classes.values())
        while todo:
            info = todo.pop()
            todo.extend(info.classes.values())
            out.extend(b.rpartition(".")[2] for b in info.bases)
        return out
    assert [m for m in sorted(index.paths) if "Worker" in bases(m)] == list(found)  # the summaries agree
