"""What the demo model says around its tool calls, in English or Chinese (`zh=True`).

Every function returns finished text: the help, "reminders are not enabled",
"I did not understand", the short note that accompanies a tool call, the
demo's canned reasoning before one, and the answer to a due reminder. Tool
results are `results`; times, rules and durations `words`.
"""

from __future__ import annotations

from typing import Any

from .kinds import Create, CreateAt, CreateDaily, CreateEvery, Delete, Intent, List, Move, SetPaused
from .words import span

__all__ = [
    "ENABLE_REMINDERS",
    "calling",
    "help_text",
    "not_enabled",
    "reasoning",
    "reminder",
    "unclear",
    "updating",
]

ENABLE_REMINDERS = "dsh web --overlay overlays/web-schedule"
_EN_HELP = """\
I understand a few reminder requests:
- remind me in 10 seconds to stretch
- remind me at 9:00 tomorrow to call mum
- remind me every day at 9 to water the plants
- every weekday at 8:30 remind me to stand up
- remind me every 2 hours to drink water
- list reminders · pause reminder rem-2 · resume reminder rem-2
- move rem-1 to 10:00 · cancel reminder rem-1
- 明天上午9点提醒我开会 · 每天早上9点提醒我喝水 · 每隔2小时提醒我起来走走
Times are in your time zone (your browser tells it), else UTC."""

_ZH_HELP = """\
我能理解几种提醒请求：
- 10秒后提醒我喝水
- 明天上午9点提醒我开会
- 每天早上9点提醒我喝水
- 每个工作日8点半提醒我站会
- 每隔2小时提醒我起来走走
- 列出提醒 · 暂停提醒 rem-2 · 恢复提醒 rem-2
- 把 rem-1 改到10点 · 删除提醒 rem-1
- remind me at 9:00 tomorrow to call mum · list reminders · cancel reminder <id>
时间按你所在的时区（浏览器会告诉主机），否则按 UTC。"""

_EN_DAYS = {"*": "every day", "MON-FRI": "every weekday"}
_ZH_DAYS = {"*": "每天", "MON-FRI": "每个工作日"}
_EN_WEEKDAYS = {
    "MON": "Monday",
    "TUE": "Tuesday",
    "WED": "Wednesday",
    "THU": "Thursday",
    "FRI": "Friday",
    "SAT": "Saturday",
    "SUN": "Sunday",
}
_ZH_WEEKDAYS = {"MON": "一", "TUE": "二", "WED": "三", "THU": "四", "FRI": "五", "SAT": "六"}


def help_text(zh: bool, reminders_enabled: bool) -> str:
    """The reminder requests the demo understands (its help adds what it is and how to
    configure a real model), and how to enable them where they are not."""
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
        return (
            "我没看懂这个提醒。请这样说：10秒后提醒我喝水、明天上午9点提醒我开会、"
            "每天早上9点提醒我喝水、列出提醒，或 删除提醒 <id>。"
        )
    return (
        "I couldn't read that reminder. Try: remind me in 10 minutes to stretch, "
        "remind me at 9:00 tomorrow to call mum, remind me every day at 9 to stretch, "
        "list reminders, or cancel reminder <id>."
    )


def _clock(hour: int, minute: int) -> str:
    return f"{hour:02d}:{minute:02d}"


def _daily(intent: CreateDaily, zh: bool) -> str:
    clock = _clock(intent.hour, intent.minute)
    if zh:
        days = _ZH_DAYS.get(intent.days) or f"每周{_ZH_WEEKDAYS.get(intent.days, '日')}"
        return f"{days} {clock}"
    days = _EN_DAYS.get(intent.days) or f"every {_EN_WEEKDAYS[intent.days]}"
    return f"{days} at {clock}"


def _when(intent: CreateAt | CreateDaily | CreateEvery, arguments: dict[str, Any], zh: bool) -> str:
    """When the reminder fires, as the tool call says it."""
    zone = arguments.get("time_zone", "UTC")
    if isinstance(intent, CreateAt):
        local = str(arguments["at"]).replace("T", " ")
        return f"{local}（{zone}）" if zh else f"{local} ({zone})"
    if isinstance(intent, CreateDaily):
        daily = _daily(intent, zh)
        return f"{daily}（{zone}）" if zh else f"{daily} ({zone})"
    return f"每隔{span(intent.seconds, zh)}" if zh else f"every {span(intent.seconds, zh)}"


def calling(intent: Intent, zh: bool, arguments: dict[str, Any] | None = None) -> str:
    """The short text that accompanies the first tool call for `intent`."""
    arguments = arguments or {}
    if isinstance(intent, Create):
        when, prompt = span(intent.after_seconds, zh), intent.prompt
        return (
            f"好的，{when}后提醒你“{prompt}”。"
            if zh
            else f"Setting a reminder in {when}: “{prompt}”."
        )
    if isinstance(intent, CreateAt | CreateDaily | CreateEvery):
        when = _when(intent, arguments, zh)
        if zh:
            return f"好的，{when}提醒你“{intent.prompt}”。"
        return f"Setting a reminder {'for ' if isinstance(intent, CreateAt) else ''}{when}: " + (
            f"“{intent.prompt}”."
        )
    if isinstance(intent, SetPaused | Move):
        return _checking(intent, zh)
    if isinstance(intent, List):
        return "正在查看你的提醒。" if zh else "Checking your reminders."
    assert isinstance(intent, Delete)
    return f"正在删除提醒 {intent.id}。" if zh else f"Cancelling reminder {intent.id}."


def _checking(intent: SetPaused | Move, zh: bool) -> str:
    if isinstance(intent, Move):
        clock = _clock(intent.hour, intent.minute)
        if zh:
            return f"先查看提醒 {intent.id}，再把它改到 {clock}。"
        return f"Checking reminder {intent.id} before moving it to {clock}."
    verb_zh, verb = ("暂停", "pausing") if intent.paused else ("恢复", "resuming")
    if zh:
        return f"先查看提醒 {intent.id}，再{verb_zh}它。"
    return f"Checking reminder {intent.id} before {verb} it."


def updating(intent: SetPaused | Move, zh: bool, arguments: dict[str, Any]) -> str:
    """The text that accompanies the `schedule_update` call of a change."""
    if isinstance(intent, SetPaused):
        if zh:
            return f"正在{'暂停' if intent.paused else '恢复'}提醒 {intent.id}。"
        return f"{'Pausing' if intent.paused else 'Resuming'} reminder {intent.id}."
    at = arguments.get("at")
    to = str(at).replace("T", " ") if at else _clock(intent.hour, intent.minute)
    zone = arguments.get("time_zone", "UTC")
    if zh:
        return f"正在把提醒 {intent.id} 改到 {to}（{zone}）。"
    return f"Moving reminder {intent.id} to {to} ({zone})."


def _asked(intent: Intent, zh: bool, arguments: dict[str, Any]) -> str:
    if isinstance(intent, Create):
        return (
            f"这条消息要我在{span(intent.after_seconds, zh)}后提醒“{intent.prompt}”。"
            if zh
            else f"The message asks for a reminder in {span(intent.after_seconds, zh)}: "
            f"“{intent.prompt}”."
        )
    if isinstance(intent, CreateAt | CreateDaily | CreateEvery):
        when = _when(intent, arguments, zh)
        if zh:
            return f"这条消息要我{when}提醒“{intent.prompt}”，时间按对方的时区。"
        return (
            f"The message asks for a reminder {when}: “{intent.prompt}”, in the person's time zone."
        )
    if isinstance(intent, List):
        return "这条消息想看现有的提醒。" if zh else "The message asks to see the reminders."
    if isinstance(intent, Delete):
        return (
            f"这条消息要删除提醒 {intent.id}。"
            if zh
            else f"The message asks to cancel reminder {intent.id}."
        )
    assert isinstance(intent, SetPaused | Move)
    if zh:
        return f"这条消息要修改提醒 {intent.id}；修改需要它当前的版本号，所以先列出提醒。"
    return (
        f"The message asks to change reminder {intent.id}; an update needs its current "
        "revision, so I list the reminders first."
    )


def reasoning(intent: Intent, tool: str, zh: bool, arguments: dict[str, Any] | None = None) -> str:
    """The demo's short reasoning before a tool call, labelled as the demo's canned text.

    It exists so that the reasoning path (its own delta channel, the stored
    `reasoning`, the collapsed block in the browser) runs offline.
    """
    asked = _asked(intent, zh, arguments or {})
    if zh:
        return (
            f"（演示模型的固定推理，不是真正模型的思考。）{asked}这个对话提供 {tool}，所以调用它。"
        )
    return (
        "(The demo model's canned reasoning, not a real model's thoughts.) "
        f"{asked} This conversation offers {tool}, so I call it."
    )


def reminder(prompt: str | None, reminder_id: str | None, zh: bool) -> str:
    """The answer to a due reminder's follow-up: the reminder itself (or its id, if that is all)."""
    if prompt is None:
        if zh:
            return f"⏰ 提醒 {reminder_id} 到时间了。" if reminder_id else "⏰ 有一个提醒到时间了。"
        return f"⏰ Reminder {reminder_id} is due." if reminder_id else "⏰ A reminder is due."
    return f"⏰ 提醒：{prompt}" if zh else f"⏰ Reminder: {prompt}"
