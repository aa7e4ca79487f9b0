"""What the demo model says, in English or Chinese (`zh=True`).

Every function returns finished text. Tool results are read defensively: a
value of an unexpected shape is shown as JSON rather than trusted.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from pydantic import JsonValue

from ..base import Message
from .intents import Create, Delete, List, has_chinese

__all__ = [
    "ENABLE_REMINDERS",
    "calling",
    "help_text",
    "not_enabled",
    "reasoning",
    "reminder",
    "tool_result",
    "unclear",
]

ENABLE_REMINDERS = "dsh web --overlay overlays/web-schedule"
_REAL_MODEL = "--model openai"
_REAL_MODEL_ENV = "DSH_API_KEY, DSH_MODEL_BASE_URL and DSH_MODEL"

_EN_HELP = f"""\
I'm the dsh demo model: an offline, deterministic stand-in, not a real language model.
I understand a few reminder requests:
- remind me in 10 seconds to stretch
- remind me to call mom in 5 minutes
- in 2 hours remind me to check the oven
- list reminders
- cancel reminder <id>
- 10秒后提醒我喝水 · 列出提醒 · 删除提醒 <id>
To talk to a real model, run dsh with {_REAL_MODEL} and set {_REAL_MODEL_ENV} \
(any OpenAI-compatible endpoint)."""

_ZH_HELP = f"""\
我是 dsh 的演示模型（demo）：离线、确定性的替身，不是真正的语言模型。
我能理解几种提醒请求：
- 10秒后提醒我喝水
- 5分钟后提醒我开会
- 列出提醒
- 删除提醒 <id>
- remind me in 10 seconds to stretch · list reminders · cancel reminder <id>
要使用真正的模型，请用 {_REAL_MODEL} 运行 dsh，并设置 DSH_API_KEY、DSH_MODEL_BASE_URL 和 \
DSH_MODEL（任何兼容 OpenAI 的接口）。"""

_EN_UNITS = ((86400, "day"), (3600, "hour"), (60, "minute"), (1, "second"))
_ZH_UNITS = ((86400, "天"), (3600, "小时"), (60, "分钟"), (1, "秒"))


def help_text(zh: bool, reminders_enabled: bool) -> str:
    """What the demo is, what it understands, and how to configure a real model."""
    text = _ZH_HELP if zh else _EN_HELP
    if not reminders_enabled:
        text += "\n" + not_enabled(zh)
    return text


def not_enabled(zh: bool) -> str:
    if zh:
        return f"此主机未启用提醒功能。要启用，请加载 web-schedule overlay 运行：{ENABLE_REMINDERS}"
    return (
        "Reminders are not enabled in this host. "
        f"To enable them, run with the web-schedule overlay: {ENABLE_REMINDERS}"
    )


def unclear(zh: bool) -> str:
    if zh:
        return "我没看懂这个提醒。请这样说：10秒后提醒我喝水、列出提醒，或 删除提醒 <id>。"
    return (
        "I couldn't read that reminder. Try: remind me in 10 minutes to stretch, "
        "list reminders, or cancel reminder <id>."
    )


def calling(intent: Create | List | Delete, zh: bool) -> str:
    """The short text that accompanies a tool call."""
    if isinstance(intent, Create):
        when, prompt = span(intent.after_seconds, zh), intent.prompt
        return (
            f"好的，{when}后提醒你“{prompt}”。"
            if zh
            else f"Setting a reminder in {when}: “{prompt}”."
        )
    if isinstance(intent, List):
        return "正在查看你的提醒。" if zh else "Checking your reminders."
    return f"正在删除提醒 {intent.id}。" if zh else f"Cancelling reminder {intent.id}."


def reasoning(intent: Create | List | Delete, tool: str, zh: bool) -> str:
    """The demo's short reasoning before a tool call, labelled as the demo's canned text.

    It exists so that the reasoning path (its own delta channel, the stored
    `reasoning`, the collapsed block in the browser) runs offline.
    """
    if isinstance(intent, Create):
        asked = (
            f"这条消息要我在{span(intent.after_seconds, zh)}后提醒“{intent.prompt}”。"
            if zh
            else f"The message asks for a reminder in {span(intent.after_seconds, zh)}: "
            f"“{intent.prompt}”."
        )
    elif isinstance(intent, List):
        asked = "这条消息想看现有的提醒。" if zh else "The message asks to see the reminders."
    else:
        asked = (
            f"这条消息要删除提醒 {intent.id}。"
            if zh
            else f"The message asks to cancel reminder {intent.id}."
        )
    if zh:
        return f"（演示模型的固定推理，不是真正模型的思考。）{asked}本会话提供 {tool}，所以调用它。"
    return (
        "(The demo model's canned reasoning, not a real model's thoughts.) "
        f"{asked} This session offers {tool}, so I call it."
    )


def reminder(prompt: str | None, reminder_id: str | None = None) -> str:
    """The answer to a due reminder's follow-up: the reminder itself (or its id, if that is all)."""
    if prompt is None:
        return f"⏰ Reminder {reminder_id} is due." if reminder_id else "⏰ A reminder is due."
    return f"⏰ 提醒：{prompt}" if has_chinese(prompt) else f"⏰ Reminder: {prompt}"


def tool_result(message: Message, zh: bool) -> str:
    """Plain words for one `tool` message."""
    content = message.content
    if message.is_error:
        code, text = _error_parts(content)
        return (
            f"{message.name} 失败：{code}：{text}"
            if zh
            else f"{message.name} failed: {code}: {text}"
        )
    if isinstance(content, dict):
        if message.name == "schedule_create" and "id" in content:
            return _created(content, zh)
        reminders = content.get("reminders")
        if message.name == "schedule_list" and isinstance(reminders, list):
            return _listed(reminders, zh)
        if message.name == "schedule_delete" and "deleted" in content:
            return _deleted(content, zh)
    shown = _json(content)
    return f"{message.name} 返回：{shown}" if zh else f"{message.name} returned: {shown}"


def span(seconds: int, zh: bool) -> str:
    """A duration in its largest whole unit: 300 → "5 minutes" / "5分钟"."""
    for size, unit in _ZH_UNITS if zh else _EN_UNITS:
        if seconds % size == 0 and seconds >= size:
            count = seconds // size
            if zh:
                return f"{count}{unit}"
            return f"{count} {unit}" + ("" if count == 1 else "s")
    return f"{seconds}秒" if zh else f"{seconds} seconds"


def utc(value: JsonValue) -> str:
    """An ISO-8601 instant as "YYYY-MM-DD HH:MM:SS UTC" (anything else unchanged)."""
    if not isinstance(value, str):
        return _json(value)
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return value
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _next(view: dict[str, JsonValue]) -> JsonValue:
    # A v2 view (dsh-tool-schedule protocol v2) says `nextAt`; a v1 view said `scheduledAt`.
    return view["nextAt"] if "nextAt" in view else view.get("scheduledAt")


def _after_seconds(view: dict[str, JsonValue]) -> int | None:
    rule = view.get("rule")
    if isinstance(rule, dict) and rule.get("kind") == "after":
        return _whole_seconds(rule.get("seconds"))
    return _whole_seconds(view.get("afterSeconds"))


def _created(view: dict[str, JsonValue], zh: bool) -> str:
    reminder_id, prompt, due = view["id"], view.get("prompt", ""), utc(_next(view))
    seconds = _after_seconds(view)
    if zh:
        when = "" if seconds is None else f"（{span(seconds, zh)}后）"
        return (
            f"已设置提醒 {reminder_id}：{due}{when}提醒你“{prompt}”。"
            "这是 session-local 提醒：只在本会话在线时触发。"
        )
    when = "" if seconds is None else f" (in {span(seconds, zh)})"
    return (
        f"Reminder {reminder_id} is set for {due}{when}: “{prompt}”. "
        "It is session-local: it fires only while this session is live."
    )


def _whole_seconds(value: JsonValue) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _listed(reminders: list[JsonValue], zh: bool) -> str:
    if not reminders:
        return "当前没有提醒。" if zh else "You have no reminders."
    lines = ["你的提醒（session-local）：" if zh else "Your reminders (session-local):"]
    for view in reminders:
        if not isinstance(view, dict):
            lines.append(f"- {_json(view)}")
            continue
        due, state = utc(_next(view)), view.get("state", "")
        prompt = view.get("prompt", "")
        if zh:
            lines.append(f"- {view.get('id')}：“{prompt}”，{due}（{state}）")
        else:
            lines.append(f"- {view.get('id')}: “{prompt}” at {due} ({state})")
    return "\n".join(lines)


def _deleted(result: dict[str, JsonValue], zh: bool) -> str:
    reminder_id = result.get("id")
    if result["deleted"] is True:
        return f"已删除提醒 {reminder_id}。" if zh else f"Deleted reminder {reminder_id}."
    code = result.get("code", "schedule_not_found")
    if zh:
        return f"没有找到进行中的提醒 {reminder_id}（{code}）。"
    return f"There is no active reminder {reminder_id} ({code})."


def _error_parts(content: JsonValue) -> tuple[str, str]:
    if isinstance(content, dict):
        return str(content.get("code", "error")), str(content.get("message", ""))
    return "error", _json(content)


def _json(value: JsonValue) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
