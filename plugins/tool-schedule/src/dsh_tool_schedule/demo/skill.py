"""The schedule plugin's skill for the demo model: reminders asked in plain words.

The host's `demo` model knows no plugin's words; this skill (contributed
through `dsh_demo_skills`) is what makes it understand reminders, from the
conversation alone (no network, no randomness):

- a person's message it reads as a reminder request (`intents`) becomes a
  call to `schedule_create`, `schedule_list` or `schedule_delete` — if that
  tool is offered in the request; otherwise it says reminders are not enabled
  in this host and how to enable them. Pausing, resuming and moving a
  reminder, and deleting one named by its words ("the water reminder") or
  all of them, take two steps: `schedule_list`, then — on its result — the
  `schedule_update` or `schedule_delete` calls for the reminders it means
  (`calls.matching`); when a request for one reminder matches several, it
  asks which, naming each. Each call comes with a short reasoning, labelled as the demo's
  canned text, so the reasoning path runs offline;
- a reminder without a time ("remind me to buy milk") gets "When should I
  remind you?"; the demo keeps no state, so the next message is read as the
  answer when the message before it is that question and the person's
  message before that asked for the reminder (`_intent`); "Which one: …?"
  is answered the same way, by an id or the reminder's words;
- times are the person's: "tomorrow" and "9:00" are read in the zone of
  their latest message that has one (the `timeZone` the browser sends,
  else UTC) against the time that message was stored, and every time the
  demo says is in that zone with UTC beside it;
- after tool results it answers in plain words (`results`): the id, the next
  time and whether it fires while the conversation is closed, as the host
  does (`firesWhenClosed`), for a created reminder — and, when "today at 8"
  had passed, that it is set for tomorrow; each reminder
  or "no reminders"; deleted, paused, resumed, moved or not found; an
  error's code in brackets, explained in the conversation's language;
- a follow-up queued by this plugin is recognised by its structured source
  (`{"kind": "schedule", "scheduleId", "prompt"?}`), never by its text, and
  answered with the reminder's prompt: the source's own `prompt`, else the
  prompt the conversation's tool results give for that id, else just the id;
- anything else is not its to answer (None): the demo's help then lists
  what this skill understands (`help`).

It answers in the language of the conversation — Chinese when the person's
latest message in words is Chinese.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from dsh import Message, ModelReply, ModelRequest, ToolCall

from . import replies, results
from .calls import Context, change_arguments, first_call, load_zone, matching
from .intents import choose, complete, has_chinese, read_intent
from .kinds import All, AskWhen, ById, Change, Delete, Intent, Move, SetPaused, Unclear

__all__ = ["ScheduleDemoSkill"]

_SCHEDULE_TOOLS = ("schedule_create", "schedule_list", "schedule_delete")
_UPDATE = "schedule_update"
_DELETE = "schedule_delete"
_LATIN_WORDS = re.compile(r"[A-Za-z]{2,}")
_REMINDER_ID = re.compile(r"\brem-\d+\b")


class ScheduleDemoSkill:
    """Reminders for the demo model (a `dsh.DemoSkill`; see the module docstring)."""

    def answer(self, request: ModelRequest, now_ms: int) -> ModelReply | None:
        """The reply when the conversation is about reminders, else None.

        `now_ms` is "now" only when no user message says when it was written.
        """
        messages = request.messages
        offered = _tool_names(request.tools)
        context = _context(messages, now_ms)
        last = messages[-1] if messages else None
        if last is not None and last.role == "tool":
            return _after_results(messages, offered, context)
        if last is None or last.role != "user":
            return None
        if last.source.get("kind") == "schedule":
            reminder_id = last.source.get("scheduleId")
            prompt = _reminder_prompt(messages, last.source)
            return ModelReply(
                text=replies.reminder(
                    prompt,
                    reminder_id if isinstance(reminder_id, str) else None,
                    _chinese(messages, fallback=prompt or ""),
                )
            )
        return _respond(last.text, offered, _next_call_number(messages), context, messages)

    def help(self, request: ModelRequest, chinese: bool) -> str:
        """The reminder requests the demo understands, and whether this host offers them."""
        return replies.help_text(chinese, _SCHEDULE_TOOLS[0] in _tool_names(request.tools))


def _respond(
    text: str, offered: set[str], call_number: int, context: Context, messages: Sequence[Message]
) -> ModelReply | None:
    zh = _chinese(messages, fallback=text)
    intent = _intent(messages, context)
    if intent is None:
        return None  # not about reminders: the demo's help, which lists them
    enabled = any(name in offered for name in _SCHEDULE_TOOLS)
    if isinstance(intent, Unclear):
        return ModelReply(text=replies.unclear(zh) if enabled else replies.not_enabled(zh))
    if isinstance(intent, AskWhen):
        ready = _SCHEDULE_TOOLS[0] in offered
        return ModelReply(text=replies.ASK_WHEN[zh] if ready else replies.not_enabled(zh))
    name, arguments = first_call(intent, context)
    needed = {name, _UPDATE} if isinstance(intent, SetPaused | Move) else {name}
    if isinstance(intent, Delete):
        needed.add(_DELETE)
    if not needed <= offered:
        return ModelReply(text=replies.not_enabled(zh))
    return ModelReply(
        text=replies.calling(intent, zh, arguments),
        tool_calls=(ToolCall(id=f"call_{call_number}", name=name, arguments=arguments),),
        reasoning=replies.reasoning(intent, name, zh, arguments),
    )


def _after_results(messages: Sequence[Message], offered: set[str], context: Context) -> ModelReply:
    found = _trailing_results(messages)
    zh = _chinese(messages, fallback="")
    intent = _intent(messages, context)
    listing = next(
        (item for item in found if item.name == "schedule_list" and not item.is_error), None
    )
    acting = isinstance(intent, SetPaused | Move) and _UPDATE in offered
    acting = acting or (isinstance(intent, Delete) and not isinstance(intent.target, ById))
    if acting and listing is not None:
        assert isinstance(intent, Delete | SetPaused | Move)
        return _change(intent, listing, _next_call_number(messages), context, zh)
    return ModelReply(
        text="\n\n".join(
            results.tool_result(item, zh, context.zone, intent, context.day(0).isoformat())
            for item in found
        )
    )


def _change(
    intent: Change, listing: Message, call_number: int, context: Context, zh: bool
) -> ModelReply:
    """The deletes or updates a change needs, now that the list says which reminders it means."""
    content = listing.content
    listed = content.get("reminders") if isinstance(content, dict) else None
    chosen = matching(intent.target, listed if isinstance(listed, list) else [])
    if not chosen and isinstance(intent.target, ById):
        return ModelReply(text=results.not_found(intent.target.id, zh))
    if not chosen:
        return ModelReply(text=replies.no_match(intent.target, zh))
    if len(chosen) > 1 and not (isinstance(intent.target, All) and not isinstance(intent, Move)):
        return ModelReply(text=replies.which_one(chosen, zh))
    if isinstance(intent, Delete):
        ids = [str(view.get("id")) for view in chosen]
        calls = [(_DELETE, {"id": reminder_id}) for reminder_id in ids]
        text = replies.deleting(ids, zh)
    else:
        changes = [change_arguments(intent, view, context) for view in chosen]
        if changes[0] is None:  # only a move can be impossible, and a move has one reminder
            return ModelReply(text=results.cannot_move(chosen[0], zh))
        calls = [(_UPDATE, arguments) for arguments in changes if arguments is not None]
        text = "\n".join(replies.updating(intent, zh, arguments) for _, arguments in calls)
    return ModelReply(
        text=text,
        tool_calls=tuple(
            ToolCall(id=f"call_{call_number + index}", name=name, arguments=arguments)
            for index, (name, arguments) in enumerate(calls)
        ),
        reasoning=replies.reasoning(intent, calls[0][0], zh, calls[0][1]),
    )


def _intent(messages: Sequence[Message], context: Context) -> Intent | None:
    """What the person's latest message asks for — or, when the demo's message before it
    asked a question about their message before that, what the answer completes: the
    time of a reminder (`replies.ASK_WHEN`), or which reminder (`replies.WHICH_ONE`)."""
    people = [index for index, message in enumerate(messages) if _from_person(message)]
    if not people:
        return None
    latest = read_intent(messages[people[-1]].text, context)
    asked = messages[people[-1] - 1].text if people[-1] > 0 else ""
    earlier = read_intent(messages[people[-2]].text, context) if len(people) > 1 else None
    answer = messages[people[-1]].text
    if asked in replies.ASK_WHEN.values() and isinstance(earlier, AskWhen):
        return complete(earlier.prompt, answer, context) or latest
    which = asked.startswith(tuple(replies.WHICH_ONE.values()))
    if which and latest is None and isinstance(earlier, Delete | SetPaused | Move):
        chosen = choose(answer)
        return earlier if chosen is None else replace(earlier, target=chosen)
    return latest


def _context(messages: Sequence[Message], now_ms: int) -> Context:
    """The person's clock: their latest message's time and the latest zone they sent."""
    person = next((m for m in reversed(messages) if _from_person(m)), None)
    zones = (m.time_zone for m in reversed(messages) if m.role == "user" and m.time_zone)
    zone = load_zone(next(zones, None)).key
    written = now_ms if person is None or person.time is None else person.time
    return Context(now_ms=written, zone=zone)


def _chinese(messages: Sequence[Message], *, fallback: str) -> bool:
    """The conversation's language: the person's latest message in words decides."""
    for message in reversed(messages):
        if not _from_person(message):
            continue
        if has_chinese(message.text):
            return True
        if _LATIN_WORDS.search(_REMINDER_ID.sub("", message.text)):
            return False
    return has_chinese(fallback)


def _from_person(message: Message) -> bool:
    return message.role == "user" and message.source.get("kind", "user") == "user"


def _reminder_prompt(messages: Sequence[Message], source: dict[str, Any]) -> str | None:
    """The prompt of the reminder a schedule follow-up stands for, or None if unknown."""
    prompt = source.get("prompt")
    if isinstance(prompt, str) and prompt.strip():
        return prompt
    reminder_id = source.get("scheduleId")
    for message in reversed(messages):
        if message.role != "tool" or not isinstance(message.content, dict):
            continue
        listed = message.content.get("reminders")
        views = listed if isinstance(listed, list) else [message.content]
        for view in views:
            if isinstance(view, dict) and view.get("id") == reminder_id:
                found = view.get("prompt")
                if isinstance(found, str) and found.strip():
                    return found
    return None


def _tool_names(tools: Sequence[dict[str, Any]]) -> set[str]:
    names = set()
    for schema in tools:
        function = schema.get("function")
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.add(function["name"])
    return names


def _trailing_results(messages: Sequence[Message]) -> list[Message]:
    """The tool messages after the last non-tool message, in order."""
    found: list[Message] = []
    for message in reversed(messages):
        if message.role != "tool":
            break
        found.append(message)
    return found[::-1]


def _next_call_number(messages: Sequence[Message]) -> int:
    """Call ids count every call in the conversation, so they stay unique in a Session."""
    return 1 + sum(len(m.tool_calls) for m in messages if m.role == "assistant")
