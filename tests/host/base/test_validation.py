from __future__ import annotations

from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from dsh.base.validation import describe, problems


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


class Checked(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str

    @field_validator("name")
    @classmethod
    def _no_spaces(cls, value: str) -> str:
        if " " in value:
            raise ValueError("no spaces, please")
        return value


def test_a_custom_validator_reads_without_pydantic_s_prefix() -> None:
    error = failure(Checked, {"name": "a b"})
    assert describe(error) == "name: no spaces, please"


def test_a_location_function_names_where_a_problem_is() -> None:
    error = failure(Outer, {"name": "n", "inner": {"count": "x"}})
    assert describe(error, location=lambda loc: "/".join(map(str, loc))) == (
        "inner/count: Input should be a valid integer, unable to parse string as an integer"
    )


def test_problems_and_describe_take_the_list_fastapi_hands_over() -> None:
    details = failure(Outer, {"inner": {"count": 1}}).errors()
    found = problems(details, root="body")
    assert [(item.loc, item.where, item.type) for item in found] == [(("name",), "name", "missing")]
    assert describe([{"loc": (), "msg": "Value error, broken"}], root="body") == "body: broken"
    assert describe([{}]) == "is invalid"
