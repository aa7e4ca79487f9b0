"""Hypothesis strategies shared by tests of different modules."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

__all__ = ["json_values"]


def json_values(
    *, max_leaves: int, max_size: int = 4, key_size: int | None = 8
) -> st.SearchStrategy[Any]:
    """Finite JSON values (None, booleans, integers, finite floats, text, and lists and
    objects of them), at most `max_leaves` leaves and `max_size` items per container."""
    return st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(),
        lambda children: (
            st.lists(children, max_size=max_size)
            | st.dictionaries(st.text(max_size=key_size), children, max_size=max_size)
        ),
        max_leaves=max_leaves,
    )
