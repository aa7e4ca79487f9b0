"""What the schedule plugin teaches the host's demo model: reminders in plain words.

`ScheduleDemoSkill` (`skill`) is the `dsh.DemoSkill` the plugin contributes
through `dsh_demo_skills`. It reads a request (`intents`, its times by
`when`: dateparser under a small grammar), turns it into a tool call
(`calls`), and words what happened (`replies`, `results`, `words`).
Everything is a pure function of the conversation.
"""

from .skill import ScheduleDemoSkill

__all__ = ["ScheduleDemoSkill"]
