from __future__ import annotations

from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from dsh.validation import describe


class Inner(BaseModel):
    model_config = ConfigDict(extra="forbid")
    count: int


class Outer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    inner: Inner


class Create(BaseModel):
    change: Literal["create"]
    value: int


class Delete(BaseModel):
    change: Literal["delete"]
    id: str


def failure(model: type[BaseModel], data: object) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(data)
    return caught.value


def test_every_problem_is_named_by_its_location() -> None:
    error = failure(Outer, {"inner": {"count": "x", "more": 1}})
    assert describe(error) == (
        "name: Field required; inner.count: Input should be a valid integer, unable to parse "
        "string as an integer; inner.more: Extra inputs are not permitted"
    )


def test_first_only_names_one_problem_and_counts_the_rest() -> None:
    error = failure(Outer, {"inner": {"count": "x"}})
    assert describe(error, first_only=True) == "name: Field required (and 1 more)"
    single = failure(Outer, {"name": "n", "inner": {}})
    assert describe(single, first_only=True) == "inner.count: Field required"


def test_a_top_level_problem_uses_the_root_name_or_none() -> None:
    error = failure(Outer, "text")
    assert describe(error, root="arguments").startswith("arguments: Input should be")
    assert describe(error).startswith("Input should be")


def test_union_tags_can_be_dropped_from_locations() -> None:
    adapter: TypeAdapter[Create | Delete] = TypeAdapter(
        Annotated[Create | Delete, Field(discriminator="change")]
    )
    with pytest.raises(ValidationError) as caught:
        adapter.validate_python({"change": "create", "value": "x"})
    assert describe(caught.value).startswith("create.value: ")
    assert describe(caught.value, drop_tags=("create", "delete")).startswith("value: ")
