"""Attention: what durable events mean to a person, and which of them they have not read.

A plugin says that a durable event is an **alert** (`dsh_session_alert`: the
schedule plugin, for every delivered reminder). The Host derives alerts from
each live Session's events once they are stored (`dsh.host.attention`), keeps
them with each Session's read mark in an `AttentionBackend` (`backend`; a
file beside the logs, `jsonl`; tables on PostgreSQL, `postgres`), and tells
every open page (`WS /api/live`). docs/DESIGN.md §14.1.
"""
