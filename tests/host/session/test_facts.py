"""What a Session list shows without decoding a log: titles and previews without bidi controls."""

from __future__ import annotations

import pytest

from dsh.session.event import SessionEvent
from dsh.session.facts import BIDI_CONTROLS, SummaryFacts, preview_of, title_of, without_bidi
from dsh.session.summary import SessionSummary

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: what follows it is shown reversed


def test_the_bidi_controls_are_the_embeddings_overrides_isolates_and_marks() -> None:
    expected = {
        *map(chr, range(0x202A, 0x202F)),
        *map(chr, range(0x2066, 0x206A)),
        "\u200e",
        "\u200f",
        "\u061c",
    }
    assert expected == BIDI_CONTROLS
    assert without_bidi("".join(sorted(BIDI_CONTROLS))) == ""
    # Letters of right-to-left scripts are text, not controls: they stay.
    assert without_bidi("שלום مرحبا \u200d") == "שלום مرحبا \u200d"


def test_a_title_loses_its_bidi_controls_and_one_of_nothing_else_is_no_title() -> None:
    assert title_of({"title": f"invoice{RLO}fdp.exe"}) == "invoicefdp.exe"
    assert title_of({"title": f" {RLO}\u2066 "}) is None
    assert title_of({"title": ""}) is None
    assert title_of({"title": 3}) is None


def test_a_preview_loses_them_while_the_message_keeps_its_text_exactly() -> None:
    data = {"text": f"{RLO}gnp.exe\nsecond", "source": {"kind": "user"}}
    event = SessionEvent(seq=0, type="message/user", time=1, data=data)

    facts = SummaryFacts().add_all([event])

    assert facts.preview == preview_of(data) == "gnp.exe"
    assert event.data["text"] == f"{RLO}gnp.exe\nsecond"


@pytest.mark.parametrize(
    ("title", "preview", "shown"),
    [
        (f"a{RLO}b", None, "ab"),  # a title an older index still holds
        (RLO, f"hi {RLO}there", "hi there"),
        (None, f"{RLO}\u200f", None),
    ],
)
def test_the_shown_title_has_no_bidi_controls_whatever_storage_kept(
    title: str | None, preview: str | None, shown: str | None
) -> None:
    row = SessionSummary("abc", 1, False, 1, None, title=title, preview=preview)
    assert row.shown_title == shown
