"""The foundation every layer stands on; it imports nothing else of dsh.

Clocks (`clock`), the error shapes and the one error collector (`errors`),
JSON values and their byte form (`jsontypes`, `jsonbytes`), the size limits
(`limits`), one wording of validation errors (`validation`), and the small
structured-concurrency helpers: `Scope` (ordered disposal), `Listeners`,
`TaskSet`. See docs/DESIGN.md §1 for the layers above it.
"""
