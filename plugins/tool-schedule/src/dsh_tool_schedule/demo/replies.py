"""What the demo model says around its tool calls, in English or Chinese (`zh=True`).

Every function returns finished text: the help, "reminders are not enabled",
"I did not understand", the short note that accompanies a tool call, the
demo's canned reasoning before one, and the answer to a due reminder. Tool
results are `results`; times, rules and durations `words`.
"""

from __future__ import annotations

from typing import Any

from pydantic import JsonValue

from .kinds import (
    All,
    ById,
    Create,
    CreateAt,
    CreateDaily,
    CreateEvery,
    Delete,
    Intent,
    List,
    Move,
    SetPaused,
    Target,
)
from .words import span

__all__ = [
    "ASK_WHEN",
    "ENABLE_REMINDERS",
    "WHICH_ONE",
    "calling",
    "deleting",
    "help_text",
    "no_match",
    "not_enabled",
    "reasoning",
    "reminder",
    "unclear",
    "updating",
    "which_one",
]

ENABLE_REMINDERS = "dsh web --overlay overlays/web-schedule"
ASK_WHEN = {False: "When should I remind you?", True: "什么时候提醒你？"}
"""The question a reminder without a time gets; the next message may answer it."""
_EN_HELP = """\
I understand reminder requests like these:
- remind me in 10 minutes to stretch · remind me on Friday at 5pm to call mom
- remind me at 9:00 on 2026-12-25 to open gifts · tomorrow at 9, remind me to call mum
- remind me every day at 9 to water the plants · every weekday at 8:30 remind me to stand up
- remind me every 2 hours to drink water
- remind me to buy milk (I ask when)
- what reminders do I have? · pause the water reminder · resume reminder rem-2
- move the stretch reminder to 5pm · cancel the water reminder · delete all reminders
- 下周五下午5点提醒我给妈妈打电话 · 每周一早上8点提醒我开会 · 取消喝水的提醒
Times are in your time zone (your browser tells it), else UTC."""

_ZH_HELP = """\
我能理解这样的提醒请求：
- 10分钟后提醒我喝水 · 下周五下午5点提醒我给妈妈打电话
- 明天早上8点提醒我开会 · 12月25日上午9点提醒我拆礼物
- 每天晚上9点提醒我吃药 · 每周一早上8点提醒我写周报 · 每个工作日8点半提醒我站会
- 每隔2小时提醒我起来走走
- 提醒我买牛奶（我会问什么时候）
- 我有哪些提醒？ · 暂停喝水的提醒 · 恢复提醒 rem-2
- 把拉伸的提醒改到下午5点 · 取消喝水的提醒 · 删除所有提醒
- remind me on Friday at 5pm to call mom · what reminders do I have?
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
            "我没看懂这个提醒。请这样说：10分钟后提醒我喝水、明天上午9点提醒我开会、"
            "每天早上9点提醒我喝水、我有哪些提醒？，或 取消喝水的提醒。"
        )
    return (
        "I couldn't read that reminder. Try: remind me in 10 minutes to stretch, "
        "remind me on Friday at 5pm to call mom, remind me every day at 9 to stretch, "
        "what reminders do I have?, or cancel the water reminder."
    )


WHICH_ONE = {False: "Which one: ", True: "是哪一个："}
"""How the question when several reminders match begins; the next message may answer it."""


def which_one(views: list[dict[str, JsonValue]], zh: bool) -> str:
    """The question when more than one reminder matches: each by its words and id."""
    named = [f"“{view.get('prompt', '')}”（{view.get('id')}）" for view in views]
    if zh:
        return f"{WHICH_ONE[zh]}{'还是'.join(named)}？"
    listed = [f"“{view.get('prompt', '')}” ({view.get('id')})" for view in views]
    return f"{WHICH_ONE[zh]}{', '.join(listed[:-1])} or {listed[-1]}?"


def no_match(target: Target, zh: bool) -> str:
    """Nothing listed is what `target` names (an id says so with its code, `results`)."""
    if isinstance(target, All):
        return "当前没有提醒。" if zh else "You have no reminders."
    words = target.id if isinstance(target, ById) else target.words
    return f"没有找到“{words}”的提醒。" if zh else f"No reminder matches “{words}”."


def _named(target: Target, zh: bool) -> str:
    """How the person named the reminders: `rem-2`, “water”, all."""
    if isinstance(target, ById):
        return f"提醒 {target.id}" if zh else f"reminder {target.id}"
    if isinstance(target, All):
        return "所有提醒" if zh else "all reminders"
    return f"“{target.words}”的提醒" if zh else f"the “{target.words}” reminder"


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
    if isinstance(intent, List):
        return "正在查看你的提醒。" if zh else "Checking your reminders."
    assert isinstance(intent, Delete | SetPaused | Move)
    if isinstance(intent, Delete) and isinstance(intent.target, ById):
        reminder_id = intent.target.id
        return f"正在删除提醒 {reminder_id}。" if zh else f"Cancelling reminder {reminder_id}."
    return _checking(intent, zh)


def _checking(intent: Delete | SetPaused | Move, zh: bool) -> str:
    named = _named(intent.target, zh)
    if isinstance(intent, Move):
        clock = _clock(intent.hour, intent.minute)
        if zh:
            return f"先查看{named}，再把它改到 {clock}。"
        return f"Checking {named} before moving it to {clock}."
    if isinstance(intent, Delete):
        return f"先查看{named}，再删除。" if zh else f"Checking {named} before cancelling."
    verb_zh, verb = ("暂停", "pausing") if intent.paused else ("恢复", "resuming")
    if zh:
        return f"先查看{named}，再{verb_zh}它。"
    return f"Checking {named} before {verb} it."


def updating(intent: SetPaused | Move, zh: bool, arguments: dict[str, Any]) -> str:
    """The text that accompanies the `schedule_update` call of a change."""
    reminder_id = arguments.get("id")
    if isinstance(intent, SetPaused):
        if zh:
            return f"正在{'暂停' if intent.paused else '恢复'}提醒 {reminder_id}。"
        return f"{'Pausing' if intent.paused else 'Resuming'} reminder {reminder_id}."
    at = arguments.get("at")
    to = str(at).replace("T", " ") if at else _clock(intent.hour, intent.minute)
    zone = arguments.get("time_zone", "UTC")
    if zh:
        return f"正在把提醒 {reminder_id} 改到 {to}（{zone}）。"
    return f"Moving reminder {reminder_id} to {to} ({zone})."


def deleting(ids: list[str], zh: bool) -> str:
    """The text that accompanies the `schedule_delete` calls of a delete by words or of all."""
    listed = "、".join(ids) if zh else ", ".join(ids)
    if zh:
        return f"正在删除提醒 {listed}。"
    return f"Cancelling reminder{'s' * (len(ids) > 1)} {listed}."


def _asked(intent: Intent, tool: str, zh: bool, arguments: dict[str, Any]) -> str:
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
    assert isinstance(intent, Delete | SetPaused | Move)
    named = _named(intent.target, zh)
    if isinstance(intent, Delete) and tool != "schedule_list":
        return f"这条消息要删除{named}。" if zh else f"The message asks to cancel {named}."
    if tool != "schedule_list":
        return f"这条消息要修改{named}。" if zh else f"The message asks to change {named}."
    if zh:
        return f"这条消息要修改或删除{named}；我先列出提醒，看是哪一个、当前的版本号是多少。"
    return (
        f"The message asks to change or cancel {named}; I list the reminders first, "
        "to see which it means and its current revision."
    )


def reasoning(intent: Intent, tool: str, zh: bool, arguments: dict[str, Any] | None = None) -> str:
    """The demo's short reasoning before a tool call, labelled as the demo's canned text.

    It exists so that the reasoning path (its own delta channel, the stored
    `reasoning`, the collapsed block in the browser) runs offline.
    """
    asked = _asked(intent, tool, zh, arguments or {})
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
