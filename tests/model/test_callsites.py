"""Call-site search: host calls to a name found through the text corpus, and calls that no longer bind."""

from harness import load_inline_resolver, signature
from pinport.model.callsites import failing_call_lines, iter_call_sites, text_lines


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
