"""Rows of the Session list: titles, searches and what counts as an empty Session."""

from __future__ import annotations

import pytest

from dsh.session.header import Lineage
from dsh.session.log import Session
from dsh.session.summary import TITLE_CHARS, SessionSummary, derived_title, is_empty
from dsh.session.types import END_SEED


def row(**fields: object) -> SessionSummary:
    values: dict[str, object] = {
        "id": "abc123",
        "created_at": 1,
        "live": False,
        "length": 3,
        "lineage": None,
    }
    values.update(fields)
    return SessionSummary(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("preview", "title"),
    [
        (None, None),
        ("", None),
        ("  \t ", None),
        ("Plan the trip", "Plan the trip"),
        ("  spaced   out  words ", "spaced out words"),
        ("x" * TITLE_CHARS, "x" * TITLE_CHARS),
        ("x" * (TITLE_CHARS + 1), "x" * (TITLE_CHARS - 1) + "…"),
        (
            "Please remind me tomorrow morning to call the plumber about the leaking tap",
            "Please remind me tomorrow morning to call the plumber about…",
        ),
        ("word, " * 20, "word, word, word, word, word, word, word, word, word, word…"),
        (
            "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu",
            "alpha beta gamma delta epsilon zeta eta theta iota kappa…",
        ),
        ("x" * 40 + " " + "y" * 40, "x" * 40 + "…"),
        ("x" * 20 + " " + "y" * 60, "x" * 20 + " " + "y" * 38 + "…"),  # a word too long to drop
    ],
)
def test_a_derived_title_is_the_first_line_cut_at_a_word_to_sixty_characters(
    preview: str | None, title: str | None
) -> None:
    derived = derived_title(preview)
    assert derived == title
    assert derived is None or len(derived) <= TITLE_CHARS


def test_the_shown_title_is_the_set_one_else_the_derived_one() -> None:
    assert row(title="Set", preview="first line").shown_title == "Set"
    assert row(preview="first line").shown_title == "first line"
    assert row().shown_title is None


def test_the_json_row_has_the_shown_title_and_the_plugins_or_null() -> None:
    lineage = Lineage(parentId="parent1", forkedAt=2)
    assert row(preview="hello", lineage=lineage, plugins={"p": {"n": 1}}).to_dict() == {
        "id": "abc123",
        "createdAt": 1,
        "live": False,
        "length": 3,
        "lineage": {"parentId": "parent1", "forkedAt": 2},
        "title": "hello",
        "plugins": {"p": {"n": 1}},
        "updatedAt": 1,  # nothing happened since it was made
    }
    assert row().to_dict()["plugins"] is None
    assert row(updated_at=9).to_dict()["updatedAt"] == 9


@pytest.mark.parametrize(
    ("query", "matched"),
    [
        ("", True),
        ("   ", True),
        ("ABC", True),
        ("bc1", False),
        ("lisbon", True),
        ("LISBON", True),
        ("taxes", True),
        ("  taxes ", True),
        ("trains", False),
    ],
)
def test_a_search_matches_the_title_the_preview_and_the_start_of_the_id(
    query: str, matched: bool
) -> None:
    assert row(title="Taxes", preview="Trip to Lisbon").matches(query) is matched


def test_an_empty_log_holds_nothing_but_end_seed_markers() -> None:
    session = Session.new("s1", cwd="/", created_at=1)
    assert is_empty(session)
    session._append(END_SEED, {}, 2)
    assert is_empty(session)
    session._append("session/title", {"title": "named"}, 3)
    assert not is_empty(session)
