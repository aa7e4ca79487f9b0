"""Text for PostgreSQL's `text` columns, which refuse one character: NUL.

A person or a model may write any character, NUL included (a message, a
title, a reminder's prompt). What must be kept exactly goes in as JSON,
whose escapes hold it (`events.body`, `inbox.message`); what a column only
derives for display (a Session's `title` and `preview`, an alert's title
and body) is `shown(text)`: NUL reads as U+FFFD there, as a
display would show it anyway. So no write of a value a person or a model
controls can be refused by its column's type.
"""

from __future__ import annotations

from typing import overload

__all__ = ["shown"]


@overload
def shown(text: str) -> str: ...
@overload
def shown(text: None) -> None: ...
@overload
def shown(text: str | None) -> str | None: ...
def shown(text: str | None) -> str | None:
    """`text` as a derived, display-only `text` column can hold it (NUL → U+FFFD)."""
    return None if text is None else text.replace("\x00", "\ufffd")
