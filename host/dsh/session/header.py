"""`SessionHeader`: the immutable header of a Session log (public shape, docs/DESIGN.md §2).

A strict, frozen pydantic model with camelCase JSON keys; absent optional
keys stay absent so that parsing and serialising give identical bytes.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    model_serializer,
)

from .ids import SessionId

__all__ = ["Lineage", "Origin", "SessionHeader"]


def _exact_int(value: object) -> object:
    # Strict mode still lets `true` and `1.0` satisfy `Literal[1]` (they compare equal).
    if type(value) is not int:
        raise ValueError(f"expected the integer 1, got {type(value).__name__}")
    return value


def _no_json_null(value: object, info: ValidationInfo) -> object:
    # In JSON an optional key is either absent or an int: an explicit `null` would be
    # dropped on serialising, so it could never round-trip to identical bytes. (In
    # Python, None is the field's own "absent" value.)
    if value is None and info.mode == "json":
        raise ValueError("omit the key instead of writing null")
    return value


OptionalCount = Annotated[Annotated[int, Field(ge=0)] | None, BeforeValidator(_no_json_null)]
_RECORD = ConfigDict(frozen=True, strict=True, extra="forbid", populate_by_name=False)


class _Record(BaseModel):
    """A frozen part of a header: every live Session keeps one of each."""

    model_config = _RECORD

    def model_post_init(self, context: Any, /) -> None:
        # One shared `model_fields_set` per set of given fields rather than a set
        # per instance (≈ 0.9 KB a header). Sharing is safe: a frozen model never
        # adds to it, and pydantic copies it before a `model_copy` updates it.
        given = self.__pydantic_fields_set__
        object.__setattr__(
            self, "__pydantic_fields_set__", _FIELDS_SETS.setdefault(frozenset(given), given)
        )


_FIELDS_SETS: dict[frozenset[str], set[str]] = {}


class Origin(_Record):
    """Where a Session came from."""

    kind: Literal["web", "cli", "fork", "api"]


class Lineage(_Record):
    """A fork's parent: its id and how many parent events were copied (`forkedAt`)."""

    parent_id: SessionId = Field(alias="parentId")
    forked_at: int = Field(alias="forkedAt", ge=0)


class SessionHeader(_Record):
    """The immutable header of a Session (public).

    `delegation_depth` is `None` when the key is absent, which means 0;
    `seed_length` is set on forks only. Absent optional keys stay absent in the
    JSON form so that parsing and serialising again gives identical bytes.
    """

    version: Annotated[Literal[1], BeforeValidator(_exact_int)]
    id: SessionId
    cwd: str
    created_at: int = Field(alias="createdAt")
    origin: Origin
    lineage: Lineage | None
    delegation_depth: OptionalCount = Field(default=None, alias="delegationDepth")
    seed_length: OptionalCount = Field(default=None, alias="seedLength")

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in ("delegationDepth", "seedLength", "delegation_depth", "seed_length"):
            if key in data and data[key] is None:
                del data[key]
        return data

    @property
    def depth(self) -> int:
        """The delegation depth, with an absent key read as 0."""
        return self.delegation_depth or 0

    def canonical(self) -> SessionHeader:
        """The stored form: an absent `delegationDepth` written as 0 (else `self`)."""
        if self.delegation_depth is not None:
            return self
        return self.model_copy(update={"delegation_depth": self.depth})

    def identity_equals(self, other: SessionHeader) -> bool:
        """True when both headers name the same Session lifecycle.

        Absent `delegationDepth` is equivalent to 0; every other field is exact.
        """
        return self.canonical() == other.canonical()

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    @classmethod
    def from_json(cls, text: str | bytes) -> SessionHeader:
        return cls.model_validate_json(text)


