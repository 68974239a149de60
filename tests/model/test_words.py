"""Whole-word searches find exactly what the `\\b...\\b` pattern they replace finds."""

import re

import pytest

from pinport.model.words import Words, word

TEXTS = [
    "class KVCacheManager(Base):",
    "MyKVCacheManager = KVCacheManager",
    "KVCacheManagerX KVCacheManager_ x.KVCacheManager()",
    "é_KVCacheManager KVCacheManager",
    "",
    "Worker WorkerBase GPUWorker Worker",
    "a ab abc b_a ab\nab",
    "vllm.worker xvllm.worker vllm.worker.x a.a.a.a",
]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("words", [("KVCacheManager",), ("Worker", "WorkerBase"), ("a", "ab"), ("ab", "b"),
                                   ("vllm.worker",), ("a.a.a",)])
def test_the_finds_are_those_of_the_boundary_pattern(text: str, words: tuple[str, ...]) -> None:
    reference = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(words, key=len, reverse=True))) + r")\b")
    found = [(m.start(), m.group()) for m in Words(words).finditer(text)]
    assert found == [(m.start(), m.group()) for m in reference.finditer(text)]


def test_a_name_inside_a_longer_word_is_not_found() -> None:
    assert word("Worker").search("GPUWorker WorkerBase") is None
    match = word("Worker").search("GPUWorker Worker")
    assert match is not None and match.start() == 10


def test_only_words_can_be_searched() -> None:
    for bad in ((), ("",), (".a",), ("a.",), (" x y",)):
        with pytest.raises(ValueError):
            Words(bad)
