"""What the demo model says about tool results, in the language of the conversation.

A result is read defensively: a value of an unexpected shape is shown as JSON
rather than trusted. An error result keeps its code in brackets and is said in
the conversation's language: in English with the tool's own message
(`Couldn't set the reminder [invalid_rule]: …`), in Chinese with an
explanation per code (`设置提醒失败 [invalid_rule]：…`).
"""

from __future__ import annotations

from typing import Final

from pydantic import JsonValue

from dsh import Message

from .kinds import CreateAt, Intent, Move, SetPaused
from .words import as_json, fires_words, rule_words, span, state_word, when

__all__ = ["cannot_move", "error_text", "not_found", "tool_result"]

_ACTIONS: Final = {
    "schedule_create": ("set the reminder", "设置提醒"),
    "schedule_update": ("change the reminder", "修改提醒"),
    "schedule_list": ("list the reminders", "列出提醒"),
    "schedule_delete": ("delete the reminder", "删除提醒"),
}
_ZH_ERRORS: Final = {
    "invalid_prompt": "提醒内容无效（不能为空，最多 4000 个字符）",
    "invalid_rule": "时间规则无效：可能时间已经过去、时区未知、cron 表达式不对，或规则永远不会触发",
    "limit_exceeded": "超出了限制：提醒太多、这一轮设置了太多，或间隔比主机允许的最短间隔还短",
    "schedule_conflict": "提醒已经被修改过（版本号不一致），请先列出提醒再试",
    "schedule_not_found": "没有这个进行中的提醒（不存在、已删除或已结束）",
    "persistence_uncertain": "存储在确认时出错，无法确定是否已保存；请先列出提醒，看它是否已经存在",
    "persistence_unavailable": "没有可用的持久存储，提醒在重启后不会保留",
    "schedule_log_invalid": "这个对话的提醒记录已损坏，提醒不能再修改，也不会再触发",
    "invalid_arguments": "调用参数无效",
    "internal_error": "内部错误",
}


def tool_result(
    message: Message,
    zh: bool,
    zone: str = "UTC",
    intent: Intent | None = None,
    today: str | None = None,
) -> str:
    """Plain words for one `tool` message; `intent` is what the person asked for and
    `today` the date (`YYYY-MM-DD`) in their zone when they asked."""
    content = message.content
    if message.is_error:
        return error_text(message.name, content, zh)
    if isinstance(content, dict):
        if message.name == "schedule_create" and "id" in content:
            return _rolled(content, zh, intent, today) + _created(content, zh, zone)
        reminders = content.get("reminders")
        if message.name == "schedule_list" and isinstance(reminders, list):
            return _listed(reminders, zh, zone)
        if message.name == "schedule_delete" and "deleted" in content:
            return _deleted(content, zh)
        if message.name == "schedule_update" and "id" in content:
            return _updated(content, zh, zone, intent)
    shown = as_json(content)
    return f"{message.name} 返回：{shown}" if zh else f"{message.name} returned: {shown}"


def error_text(tool: str, content: JsonValue, zh: bool) -> str:
    """A failed call: what failed, the code in brackets, and why."""
    code, detail = _error_parts(content)
    english, chinese = _ACTIONS.get(tool, (None, None))
    if zh:
        why = _ZH_ERRORS.get(code, f"工具返回了错误：{detail}")
        return f"{chinese or tool + ' '}失败 [{code}]：{why}。"
    what = f"Couldn't {english}" if english else f"{tool} failed"
    return f"{what} [{code}]: {detail}"


def not_found(reminder_id: str, zh: bool) -> str:
    if zh:
        return f"没有找到进行中的提醒 {reminder_id} [schedule_not_found]。"
    return f"There is no active reminder {reminder_id} [schedule_not_found]."


def cannot_move(view: dict[str, JsonValue], zh: bool) -> str:
    rule = rule_words(view, zh) or as_json(view.get("rule"))
    reminder_id = view.get("id")
    if zh:
        return f"我只能移动一次性、每天固定时间或固定间隔的提醒；{reminder_id} 的规则是“{rule}”。"
    return (
        "I can only move a reminder that fires once, at one time of day, or every so many "
        f"seconds; {reminder_id} fires {rule}."
    )


def _created(view: dict[str, JsonValue], zh: bool, zone: str) -> str:
    reminder_id, prompt, due = view["id"], view.get("prompt", ""), when(_next(view), zone, zh)
    seconds = _after_seconds(view)
    rule = rule_words(view, zh)
    fires = fires_words(view.get("firesWhenClosed") is True, zh)
    if zh:
        after = "" if seconds is None else f"（{span(seconds, zh)}后）"
        repeats = "" if rule is None else f"规则：{rule}。"
        return f"已设置提醒 {reminder_id}：{due}{after}提醒你“{prompt}”。{repeats}{fires}"
    after = "" if seconds is None else f" (in {span(seconds, zh)})"
    repeats = "" if rule is None else f" Rule: {rule}."
    return f"Reminder {reminder_id} is set for {due}{after}: “{prompt}”.{repeats} {fires}"


def _rolled(view: dict[str, JsonValue], zh: bool, intent: Intent | None, today: str | None) -> str:
    """Say so when "today at 8:00" had passed and the reminder is set for tomorrow."""
    rule = view.get("rule")
    at = rule.get("at") if isinstance(rule, dict) else None
    if not isinstance(intent, CreateAt) or today is None:
        return ""
    if intent.day is not None and intent.day.isoformat() != today:
        return ""
    if not isinstance(at, str) or at[:10] <= today:
        return ""
    clock = f"{intent.hour}:{intent.minute:02d}"
    return (
        f"今天的 {clock} 已经过去了，所以设在明天。"
        if zh
        else (f"{clock} has already passed today, so it is set for tomorrow. ")
    )


def _listed(reminders: list[JsonValue], zh: bool, zone: str) -> str:
    if not reminders:
        return "当前没有提醒。" if zh else "You have no reminders."
    lines = ["你的提醒：" if zh else "Your reminders:"]
    for view in reminders:
        if not isinstance(view, dict):
            lines.append(f"- {as_json(view)}")
            continue
        due, state = _next_words(view, zh, zone), state_word(view.get("state", ""), zh)
        rule = rule_words(view, zh)
        prompt = view.get("prompt", "")
        if zh:
            repeats = "" if rule is None else f"，{rule}"
            lines.append(f"- {view.get('id')}：“{prompt}”，{due}（{state}）{repeats}")
        else:
            repeats = "" if rule is None else f", {rule}"
            lines.append(f"- {view.get('id')}: “{prompt}” {due} ({state}){repeats}")
    return "\n".join(lines)


def _next_words(view: dict[str, JsonValue], zh: bool, zone: str) -> str:
    next_at = _next(view)
    if next_at is None:
        return "没有下一次" if zh else "with no next occurrence"
    return when(next_at, zone, zh=True) if zh else f"at {when(next_at, zone)}"


def _updated(view: dict[str, JsonValue], zh: bool, zone: str, intent: Intent | None) -> str:
    reminder_id, prompt = view["id"], view.get("prompt", "")
    due = _next_words(view, zh, zone)
    if isinstance(intent, SetPaused) and intent.paused:
        return (
            f"已暂停提醒 {reminder_id}（“{prompt}”）。"
            if zh
            else (f"Reminder {reminder_id} is paused: “{prompt}”.")
        )
    if isinstance(intent, SetPaused):
        return (
            f"已恢复提醒 {reminder_id}（“{prompt}”），下次：{due}。"
            if zh
            else (f"Reminder {reminder_id} is resumed: “{prompt}”, next {due}.")
        )
    if isinstance(intent, Move):
        return (
            f"已把提醒 {reminder_id}（“{prompt}”）改到：{due}。"
            if zh
            else (f"Reminder {reminder_id} now fires {due}: “{prompt}”.")
        )
    state = state_word(view.get("state", ""), zh)
    revision = view.get("revision")
    if zh:
        return f"已修改提醒 {reminder_id}（第 {revision} 版）：下次 {due}（{state}）。"
    return f"Reminder {reminder_id} is updated (revision {revision}): next {due} ({state})."


def _deleted(result: dict[str, JsonValue], zh: bool) -> str:
    reminder_id = result.get("id")
    if result["deleted"] is True:
        return f"已删除提醒 {reminder_id}。" if zh else f"Deleted reminder {reminder_id}."
    code = result.get("code", "schedule_not_found")
    if zh:
        return f"没有找到进行中的提醒 {reminder_id} [{code}]。"
    return f"There is no active reminder {reminder_id} [{code}]."


def _next(view: dict[str, JsonValue]) -> JsonValue:
    # A v2 view (dsh-tool-schedule protocol v2) says `nextAt`; a v1 view said `scheduledAt`.
    return view["nextAt"] if "nextAt" in view else view.get("scheduledAt")


def _after_seconds(view: dict[str, JsonValue]) -> int | None:
    rule = view.get("rule")
    if isinstance(rule, dict) and rule.get("kind") == "after":
        return _whole_seconds(rule.get("seconds"))
    return _whole_seconds(view.get("afterSeconds"))


def _whole_seconds(value: JsonValue) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _error_parts(content: JsonValue) -> tuple[str, str]:
    if isinstance(content, dict):
        return str(content.get("code", "error")), str(content.get("message", ""))
    return "error", as_json(content)
