"""Layout-blind text comparison used by mirror, fork and copied-line detection."""

from pinport.plugin.similarity import block_ratio, line_delta, line_tokens, normalise, token_ratio


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
