"""Search terms: words, CJK pairs, the query's conjunction and prefix, snippets."""

from __future__ import annotations

import pytest

from dsh.search.terms import fts_query, index_terms, parse_query, snippet


def test_words_are_folded_and_cjk_runs_become_pairs_then_their_last_character() -> None:
    assert index_terms("Stretch at 5PM, ＡＢＣ!") == "stretch at 5pm abc"
    assert index_terms("我们明天开会吧") == "我们 们明 明天 天开 开会 会吧 吧"
    assert index_terms("会") == "会"
    assert index_terms("call 妈妈 now") == "call 妈妈 妈 now"
    assert index_terms("   ") == ""


@pytest.mark.parametrize(
    ("typed", "expression"),
    [
        ("开会", '"开会"'),
        ("明天开会", '"明天 天开 开会"'),
        ("会", '"会"*'),
        ("stre", '"stre"*'),
        ("call mom", '"call" "mom"*'),
        ('"; DROP TABLE messages; --', '"drop" "table" "messages"*'),
        ("开会 notes", '"开会" "notes"*'),
    ],
)
def test_a_query_is_a_conjunction_of_quoted_phrases_with_the_last_word_a_prefix(
    typed: str, expression: str
) -> None:
    assert fts_query(parse_query(typed)) == expression


def test_a_query_of_nothing_searchable_is_empty() -> None:
    assert parse_query("  ?! ").empty
    assert not parse_query("a").empty


def test_a_snippet_is_cut_around_the_first_match_on_one_line() -> None:
    text = "x " * 100 + "我们\n明天开会吧 " + "y " * 100
    cut = snippet(text, parse_query("开会"))
    assert cut.startswith("…") and cut.endswith("…") and "明天开会吧" in cut
    assert "\n" not in cut and len(cut) <= 82
    assert snippet("short text", parse_query("zzz")) == "short text"
    end = snippet("a " * 60 + "needle", parse_query("needle"))
    assert end.endswith("needle") and end.startswith("…")
