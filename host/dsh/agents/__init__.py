"""Agents and their tools (docs/DESIGN.md §5).

An `Agent` (`agent`) drives one Session: its phases, its input queue and the
turn that calls a model adapter (`dsh.models`) and runs the tools it asks for
through the pipeline of `tools`.
"""
