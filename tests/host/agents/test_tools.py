from __future__ import annotations

import enum
import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from pydantic import Field, JsonValue

from dsh.agents.agent import Agent
from dsh.agents.errors import DuplicateTool, ToolError
from dsh.agents.tools import (
    Tool,
    ToolArguments,
    ToolContext,
    ToolOutcome,
    ToolRegistry,
    invoke_tool,
    registering_as,
)
from dsh.models.base import ModelReply, ModelRequest, ToolCall
from dsh.session.live import LiveSessions
from dsh.session.log import Session
from dsh.testing import FakeClock
from tests.support.deadlines import WAIT

pytestmark = pytest.mark.anyio


class Unit(enum.Enum):
    SECONDS = "seconds"
    MINUTES = "minutes"


class WaitArgs(ToolArguments):
    """Arguments of the test tool."""

    prompt: str = Field(description="what to say")
    after_seconds: int
    unit: Unit = Unit.SECONDS


class EchoTool(Tool[WaitArgs]):
    name = "wait_then_say"
    description = "Echo the validated arguments."
    arguments = WaitArgs

    async def run(self, args: WaitArgs, ctx: ToolContext) -> JsonValue:
        return {"prompt": args.prompt, "after": args.after_seconds, "unit": args.unit.value}


class NoArgs(ToolArguments):
    pass


class ResultTool(Tool[NoArgs]):
    """Returns whatever it was built with, or raises it."""

    description = "test"
    arguments = NoArgs

    def __init__(self, name: str, result: Any = None, raises: BaseException | None = None):
        self.name = name  # type: ignore[misc]
        self._result = result
        self._raises = raises

    async def run(self, args: NoArgs, ctx: ToolContext) -> JsonValue:
        if self._raises is not None:
            raise self._raises
        result: JsonValue = self._result
        return result


class NeverModel:
    name = "never"

    async def complete(self, request: ModelRequest, on_delta: Any = None) -> ModelReply:
        raise AssertionError("unreachable: these tests never run a turn")


@pytest.fixture
async def ctx() -> AsyncIterator[ToolContext]:
    clock = FakeClock()
    live = LiveSessions(clock)
    session = Session.new("tools-test", cwd="/", created_at=clock.wall_ms())
    live.open(session)
    async with anyio.create_task_group() as group:
        agent = Agent(session=session, live=live, model=NeverModel(), group=group)
        yield ToolContext(agent=agent, session=session, live=live, clock=clock)
        await agent.aclose()


def registry_with(*tools: Tool[Any]) -> ToolRegistry:
    registry = ToolRegistry()
    for tool in tools:
        registry.register(tool)
    return registry


# -- registry --------------------------------------------------------------


def test_a_registered_tool_is_found_by_name_and_listed_in_order() -> None:
    first, second = EchoTool(), ResultTool("second")
    registry = registry_with(first, second)

    assert registry.get("wait_then_say") is first
    assert registry.get("missing") is None
    assert registry.names() == ["wait_then_say", "second"]
    assert list(registry) == [first, second]
    assert len(registry) == 2
    assert "second" in registry
    assert "missing" not in registry


def test_the_disposer_unregisters_exactly_that_registration() -> None:
    registry = ToolRegistry()
    old = ResultTool("thing")
    dispose_old = registry.register(old)
    dispose_old()
    assert "thing" not in registry

    new = ResultTool("thing")
    registry.register(new)
    dispose_old()  # a stale disposer must not remove the newer registration

    assert registry.get("thing") is new


def test_a_duplicate_name_is_rejected_with_an_error_naming_the_tool() -> None:
    registry = registry_with(ResultTool("schedule_list"))

    with pytest.raises(DuplicateTool, match="'schedule_list' is already registered"):
        registry.register(ResultTool("schedule_list"))
    assert issubclass(DuplicateTool, ValueError)


@pytest.mark.parametrize("thing", [object(), "schedule_list", EchoTool])
def test_registering_something_that_is_not_a_tool_raises_type_error(thing: Any) -> None:
    with pytest.raises(TypeError, match=r"expected a dsh\.Tool"):
        ToolRegistry().register(thing)


@pytest.mark.parametrize("name", ["", "1abc", "has space", "x" * 65])
def test_a_tool_with_an_invalid_name_is_rejected_with_type_error(name: str) -> None:
    with pytest.raises(TypeError, match="invalid name"):
        ToolRegistry().register(ResultTool(name))


def test_a_tool_whose_arguments_give_no_schema_is_rejected_when_registered() -> None:
    class Broken(EchoTool):
        arguments = int  # type: ignore[assignment]

    registry = ToolRegistry()
    with pytest.raises(TypeError, match="'wait_then_say': its arguments give no JSON schema"):
        registry.register(Broken())
    assert registry.names() == []


# -- schema ----------------------------------------------------------------


def test_the_schema_is_an_openai_function_built_from_the_pydantic_model() -> None:
    schema = EchoTool().schema()

    assert schema["type"] == "function"
    function = schema["function"]
    assert function["name"] == "wait_then_say"
    assert function["description"] == "Echo the validated arguments."
    parameters = function["parameters"]
    assert "title" not in parameters
    assert parameters["type"] == "object"
    assert parameters["required"] == ["prompt", "after_seconds"]
    assert parameters["additionalProperties"] is False
    assert parameters["properties"]["prompt"]["description"] == "what to say"
    assert parameters["properties"]["after_seconds"]["type"] == "integer"
    # Fresh outer dicts; the parameters are shared, built once per arguments model.
    again = EchoTool().schema()
    assert again == schema and again is not schema and again["function"] is not function
    assert again["function"]["parameters"] is parameters


def test_the_registry_exports_every_schema_in_registration_order() -> None:
    registry = registry_with(EchoTool(), ResultTool("other"))

    names = [schema["function"]["name"] for schema in registry.schemas()]

    assert names == ["wait_then_say", "other"]


# -- the pipeline ----------------------------------------------------------


async def test_valid_json_text_arguments_run_the_tool_and_return_its_value(
    ctx: ToolContext,
) -> None:
    call = ToolCall("c1", "wait_then_say", '{"prompt": "stretch", "after_seconds": 10}')

    outcome = await invoke_tool(registry_with(EchoTool()), call, ctx)

    assert outcome.ok
    assert outcome.to_event_data() == {
        "callId": "c1",
        "name": "wait_then_say",
        "value": {"prompt": "stretch", "after": 10, "unit": "seconds"},
    }


async def test_dict_arguments_are_validated_in_json_mode_so_enums_take_their_values(
    ctx: ToolContext,
) -> None:
    call = ToolCall("c1", "wait_then_say", {"prompt": "x", "after_seconds": 1, "unit": "minutes"})

    outcome = await invoke_tool(registry_with(EchoTool()), call, ctx)

    assert outcome.value == {"prompt": "x", "after": 1, "unit": "minutes"}


async def test_empty_argument_text_means_no_arguments(ctx: ToolContext) -> None:
    outcome = await invoke_tool(
        registry_with(ResultTool("noop", result=[1, "two", None])), ToolCall("c", "noop", " "), ctx
    )

    assert outcome.value == [1, "two", None]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ('{"prompt": "x", ', "arguments are not valid JSON"),
        ("[1, 2]", "arguments must be a JSON object"),
        ('"just text"', "arguments must be a JSON object"),
        ('{"prompt": "x"}', "after_seconds: Field required"),
        (
            '{"prompt": "x", "after_seconds": "10"}',
            "after_seconds: Input should be a valid integer",
        ),
        ('{"prompt": "x", "after_seconds": 1, "at": "noon"}', "at: Extra inputs are not permitted"),
        ('{"prompt": "x", "after_seconds": 1, "unit": "years"}', "unit: Input should be"),
        ('{"prompt": "x", "after_seconds": NaN}', "NaN is not a JSON number"),
        ('{"prompt": "x", "after_seconds": 1e400}', "after_seconds: inf is not a JSON number"),
        ({"prompt": "x", "after_seconds": {1, 2}}, "arguments.after_seconds: set is not JSON"),
        ({"prompt": "x", "after_seconds": float("nan")}, "nan is not a JSON number"),
    ],
)
async def test_bad_arguments_become_an_invalid_arguments_result_naming_the_problem(
    ctx: ToolContext, arguments: Any, message: str
) -> None:
    outcome = await invoke_tool(
        registry_with(EchoTool()), ToolCall("c9", "wait_then_say", arguments), ctx
    )

    assert not outcome.ok
    assert outcome.error is not None
    assert outcome.error["code"] == "invalid_arguments"
    assert message in outcome.error["message"]
    assert outcome.to_event_data()["error"] == outcome.error


async def test_a_tool_error_becomes_its_own_code_and_message(ctx: ToolContext) -> None:
    tool = ResultTool("create", raises=ToolError("invalid_prompt", "prompt must not be empty"))

    outcome = await invoke_tool(registry_with(tool), ToolCall("c", "create", "{}"), ctx)

    assert outcome.to_event_data() == {
        "callId": "c",
        "name": "create",
        "error": {"code": "invalid_prompt", "message": "prompt must not be empty"},
    }


async def test_an_unexpected_exception_becomes_internal_error_and_is_logged_with_traceback(
    ctx: ToolContext, caplog: pytest.LogCaptureFixture
) -> None:
    tool = ResultTool("fragile", raises=KeyError("gone"))

    with caplog.at_level(logging.ERROR, logger="dsh.agents.tools"):
        outcome = await invoke_tool(registry_with(tool), ToolCall("c", "fragile", "{}"), ctx)

    assert outcome.error == {
        "code": "internal_error",
        "message": "the tool 'fragile' failed unexpectedly; the host's log has the details, "
        "not this conversation",
    }
    [record] = caplog.records
    assert record.getMessage() == ("tool 'fragile' of no named plugin failed in session tools-test")
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], KeyError)


async def test_a_failing_tool_is_logged_with_whoever_registered_it_and_its_text_stays_home(
    ctx: ToolContext, caplog: pytest.LogCaptureFixture
) -> None:
    registry = ToolRegistry()
    with registering_as("plugin 'tool-clock' (dsh-tool-clock 0.1)"):
        registry.register(ResultTool("clock_now", raises=RuntimeError("secret path /etc/x")))

    with caplog.at_level(logging.ERROR, logger="dsh.agents.tools"):
        outcome = await invoke_tool(registry, ToolCall("c", "clock_now", "{}"), ctx)

    assert outcome.error is not None and "secret" not in outcome.error["message"]
    assert "RuntimeError" not in outcome.error["message"]
    [record] = caplog.records
    assert record.getMessage() == (
        "tool 'clock_now' of plugin 'tool-clock' (dsh-tool-clock 0.1) failed in session tools-test"
    )
    assert record.exc_info is not None and "secret path" in str(record.exc_info[1])


def test_a_tool_registered_again_outside_any_origin_forgets_the_old_origin() -> None:
    registry = ToolRegistry()
    with registering_as("plugin 'a'"):
        unregister = registry.register(ResultTool("t"))
    assert registry.origin("t") == "plugin 'a'"
    unregister()
    assert registry.origin("t") is None
    registry.register(ResultTool("t"))
    assert registry.origin("t") is None


def test_a_tool_context_built_without_a_time_zone_has_none() -> None:
    assert "time_zone" in ToolContext.__dataclass_fields__
    assert ToolContext.__dataclass_fields__["time_zone"].default is None


@pytest.mark.parametrize(
    "result", [{1, 2}, float("nan"), float("inf"), object(), {"nested": [object()]}, {1: "x"}]
)
async def test_a_result_that_is_not_json_becomes_invalid_result(
    ctx: ToolContext, result: Any
) -> None:
    tool = ResultTool("odd", result=result)

    outcome = await invoke_tool(registry_with(tool), ToolCall("c", "odd", "{}"), ctx)

    assert outcome.error is not None
    assert outcome.error["code"] == "invalid_result"
    assert "'odd'" in outcome.error["message"]


async def test_an_unknown_tool_becomes_unknown_tool_listing_what_is_available(
    ctx: ToolContext,
) -> None:
    outcome = await invoke_tool(registry_with(EchoTool()), ToolCall("c", "nope", "{}"), ctx)

    assert outcome.error == {
        "code": "unknown_tool",
        "message": "no tool named 'nope' (available: wait_then_say)",
    }


async def test_an_unknown_tool_in_an_empty_registry_says_none_are_available(
    ctx: ToolContext,
) -> None:
    outcome = await invoke_tool(ToolRegistry(), ToolCall("c", "nope", "{}"), ctx)

    assert outcome.error is not None
    assert outcome.error["message"].endswith("(available: none)")


async def test_cancellation_inside_a_tool_is_not_turned_into_a_result(ctx: ToolContext) -> None:
    started = anyio.Event()

    class Blocking(Tool[NoArgs]):
        name = "block"
        description = "blocks"
        arguments = NoArgs

        async def run(self, args: NoArgs, ctx: ToolContext) -> JsonValue:
            started.set()
            await anyio.sleep_forever()
            raise AssertionError("unreachable: sleep_forever returned")

    outcomes: list[ToolOutcome] = []
    async with anyio.create_task_group() as group:

        async def call() -> None:
            outcomes.append(
                await invoke_tool(registry_with(Blocking()), ToolCall("c", "block", "{}"), ctx)
            )

        group.start_soon(call)
        with anyio.fail_after(WAIT):
            await started.wait()
        group.cancel_scope.cancel()

    assert outcomes == []


def test_a_tool_error_carries_code_and_message() -> None:
    error = ToolError("invalid_rule", "cron is not supported")

    assert (error.code, error.message) == ("invalid_rule", "cron is not supported")
    assert str(error) == "invalid_rule: cron is not supported"
