"""`dsh --overlay PATH COMMAND`: commands contributed by the plugins an overlay enables."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from dsh import HostNotRunning
from dsh.persistence import JsonlBackend
from dsh.session.log import Session
from dsh.web.running import remember_overlay

from ..fixtures.distributions import FakeSite
from .conftest import Cli


def overlay(tmp_path: Path, *names: str) -> Path:
    path = tmp_path / "overlay.toml"
    path.write_text("".join(f"[plugins.{name}]\n" for name in names), encoding="utf-8")
    return path


def store(data_dir: Path, *session_ids: str) -> None:
    async def write() -> None:
        backend = JsonlBackend(data_dir)
        for index, session_id in enumerate(session_ids):
            session = Session.new(session_id, cwd="/", created_at=1_000 + index)
            await backend.initialize(session.header, [])
        await backend.aclose()

    anyio.run(write)


def test_a_plugin_command_runs_with_its_own_arguments(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    site.plugin("commands", "Commands")
    path = overlay(tmp_path, "commands")

    plain = dsh("--overlay", str(path), "hello")
    named = dsh(f"--overlay={path}", "hello", "--name", "three")

    assert (plain.code, plain.out, plain.err) == (0, "hello world from commands\n", "")
    assert (named.code, named.out) == (3, "hello three from commands\n")


def test_an_async_command_reads_stored_sessions_through_the_store_selection(
    dsh: Cli, site: FakeSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site.plugin("commands", "Commands")
    path = overlay(tmp_path, "commands")
    data_dir = tmp_path / "data"
    store(data_dir, "older", "newer")

    given = dsh("--overlay", str(path), "count", "--data-dir", str(data_dir))
    monkeypatch.setenv("DSH_DATA_DIR", str(data_dir))
    from_environment = dsh("--overlay", str(path), "count")

    assert given.code == 0
    assert given.out == f"2 sessions in {data_dir}\nnewer: 0 events\nolder: 0 events\n"
    assert from_environment.out == given.out


def test_help_lists_plugin_commands_only_with_an_overlay(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    site.plugin("commands", "Commands")
    path = overlay(tmp_path, "commands")

    with_overlay = dsh("--overlay", str(path), "--help")
    without = dsh("--help")

    assert with_overlay.code == 0
    assert "say hello (plugin commands)" in with_overlay.out
    assert "count stored Sessions (plugin commands)" in with_overlay.out
    assert "hello" not in without.out
    assert "dsh --overlay PATH --help lists them" in " ".join(without.out.split())


def test_a_plugin_command_without_an_overlay_names_its_plugin_and_how_to_enable_it(
    dsh: Cli, site: FakeSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site.plugin("commands", "Commands")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DSH_OVERLAY", raising=False)
    monkeypatch.setenv("DSH_DATA_DIR", str(tmp_path / "data"))

    result = dsh("hello", "--name", "x")

    assert result.code == 2 and result.out == ""
    assert result.err == (
        "dsh: error: 'hello' is a command of plugin commands (dsh-commands 1.0), which needs "
        "an overlay that enables it: give one with --overlay PATH (before or after the "
        f"command) or $DSH_OVERLAY; the data dir {tmp_path / 'data'} remembers none (a dsh "
        "web started there with --overlay makes it remember)\n"
    )


def test_the_hint_names_an_overlay_here_that_enables_the_plugin(
    dsh: Cli, site: FakeSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site.plugin("commands", "Commands")
    for name, body in [
        ("a-broken", "[plugins.x\n"),
        ("b-other", "[plugins.other]\n"),
        ("c-commands", "[plugins.commands]\n"),
        ("d-commands-too", "[plugins.commands]\n"),
    ]:
        (tmp_path / "overlays" / name).mkdir(parents=True)
        (tmp_path / "overlays" / name / "overlay.toml").write_text(body, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DSH_OVERLAY", raising=False)

    result = dsh("count", "--data-dir", "elsewhere")

    assert result.code == 2
    assert result.err == (
        "dsh: error: 'count' is a command of plugin commands (dsh-commands 1.0), which needs "
        "an overlay that enables it: dsh count ... --overlay overlays/c-commands "
        "(or set DSH_OVERLAY=overlays/c-commands); the data dir elsewhere remembers none (a "
        "dsh web started there with --overlay makes it remember)\n"
    )


def test_without_an_overlay_the_one_the_data_dir_remembers_is_used(
    dsh: Cli, site: FakeSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site.plugin("commands", "Commands")
    data_dir = tmp_path / "data"
    store(data_dir, "only")
    remember_overlay(data_dir, overlay(tmp_path, "commands"))
    monkeypatch.delenv("DSH_OVERLAY", raising=False)
    monkeypatch.delenv("DSH_DATA_DIR", raising=False)
    expected = f"1 sessions in {data_dir}\nonly: 0 events\n"

    given = dsh("count", "--data-dir", str(data_dir))
    joined = dsh("count", f"--data-dir={data_dir}")
    monkeypatch.setenv("DSH_DATA_DIR", str(data_dir))
    from_environment = dsh("count")
    after_dashes = dsh("count", "--", "--data-dir", "ignored")  # the command's own words

    assert (given.code, given.out, given.err) == (0, expected, "")
    assert (joined.code, joined.out) == (0, expected)
    assert (from_environment.code, from_environment.out) == (0, expected)
    assert after_dashes.code == 2 and "unrecognized arguments" in after_dashes.err


def test_a_given_overlay_wins_over_the_remembered_one(
    dsh: Cli, site: FakeSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site.plugin("commands", "Commands")
    data_dir = tmp_path / "data"
    path = overlay(tmp_path, "commands")
    data_dir.mkdir()
    remember_overlay(data_dir, tmp_path / "missing.toml")  # since moved away
    monkeypatch.delenv("DSH_OVERLAY", raising=False)

    remembered = dsh("hello", "--data-dir", str(data_dir))
    given = dsh("count", "--overlay", str(path), "--data-dir", str(data_dir))

    assert remembered.code == 1 and "missing.toml" in remembered.err
    assert (given.code, given.out) == (0, f"0 sessions in {data_dir}\n")


def test_a_command_s_action_without_a_running_host_is_one_line_naming_the_data_dir(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    site.plugin("acts", "Acts")
    path = overlay(tmp_path, "acts")
    data_dir = tmp_path / "data"

    jsonl = dsh("--overlay", str(path), "act", "--data-dir", str(data_dir))
    elsewhere = dsh(
        "--overlay", str(path), "act", "--store", f"jsonl:{tmp_path / 'd2'}", "--data-dir", "x"
    )
    memory = dsh("--overlay", str(path), "act", "--store", "memory:", "--data-dir", "x")

    assert (jsonl.code, jsonl.out) == (1, "")
    assert jsonl.err == (
        f"dsh: error: no dsh web is running on {data_dir}: start it, e.g. ./scripts/run\n"
    )
    assert f"no dsh web is running on {tmp_path / 'd2'}:" in elsewhere.err
    assert "no dsh web is running on x:" in memory.err


def test_a_command_s_action_goes_to_its_poster_and_without_one_no_host_runs(
    site: FakeSite, tmp_path: Path
) -> None:
    import argparse
    import io

    from dsh.plugins.commands import CommandContext, Streams

    asked: list[tuple[object, ...]] = []

    async def post(*given: object) -> object:
        asked.append(given)
        return {"ok": True}

    args = argparse.Namespace(data_dir=tmp_path, store=None)
    context = CommandContext("acts", Streams(io.StringIO(), io.StringIO()), args, post_action=post)

    assert anyio.run(context.session_action, "s-1", "go", {"n": 1}) == {"ok": True}
    assert asked == [(tmp_path, "s-1", "acts", "go", {"n": 1})]
    alone = CommandContext("acts", Streams(io.StringIO(), io.StringIO()), args)
    with pytest.raises(HostNotRunning, match=f"no dsh web is running on {tmp_path}: start it"):
        anyio.run(alone.session_action, "s-1", "go", {})


def test_a_word_no_plugin_offers_is_an_unknown_command(
    dsh: Cli, site: FakeSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site.plugin("commands", "Commands")
    site.plugin("fails", "FailsToStart")  # cannot load alone: offers nothing, says nothing
    monkeypatch.delenv("DSH_OVERLAY", raising=False)

    result = dsh("nothing-offers-this")

    assert result.code == 2
    assert "unknown command 'nothing-offers-this'" in result.err
    assert "fails" not in result.err and "is a command of" not in result.err


def test_the_overlay_may_follow_the_command_words(dsh: Cli, site: FakeSite, tmp_path: Path) -> None:
    site.plugin("commands", "Commands")
    path = overlay(tmp_path, "commands")
    (tmp_path / "elsewhere").mkdir()
    other = overlay(tmp_path / "elsewhere", "missing-plugin")  # an overlay that cannot load

    after = dsh("hello", "--overlay", str(path), "--name", "three")
    joined = dsh("hello", f"--overlay={path}")
    wins = dsh("--overlay", str(other), "hello", "--overlay", str(path))
    literal = dsh("--overlay", str(path), "hello", "--", "--overlay", "x")

    assert (after.code, after.out) == (3, "hello three from commands\n")
    assert (joined.code, joined.out) == (0, "hello world from commands\n")
    assert (wins.code, wins.out) == (0, "hello world from commands\n")
    # After `--` the words are the command's own: `hello` takes none.
    assert literal.code == 2 and "unrecognized arguments: -- --overlay x" in literal.err


def test_dsh_overlay_in_the_environment_is_the_overlay(
    dsh: Cli, site: FakeSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site.plugin("commands", "Commands")
    monkeypatch.setenv("DSH_OVERLAY", str(overlay(tmp_path, "commands")))

    plugin_command = dsh("hello")
    built_in = dsh("plugins")
    monkeypatch.setenv("DSH_OVERLAY", "")
    empty = dsh("plugins")

    assert (plugin_command.code, plugin_command.out) == (0, "hello world from commands\n")
    assert built_in.code == 0 and "yes" in built_in.out
    assert empty.code == 0 and "yes" not in empty.out


def test_a_failing_plugin_offers_no_command_and_the_others_still_work(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    site.plugin("commands", "Commands")
    site.plugin("broken", "BrokenCommands")
    path = overlay(tmp_path, "commands", "broken")

    works = dsh("--overlay", str(path), "hello")
    partial = dsh("--overlay", str(path), "partial")

    assert works.code == 0 and works.out == "hello world from commands\n"
    assert works.err == (
        "dsh: plugin 'broken' offers no commands: dsh_cli_commands failed: ValueError: "
        "plugin 'broken': register: 'Bad Name' is not a command name (lowercase letters, "
        "digits and '-', starting with a letter, at most 32 characters)\n"
    )
    assert partial.code == 2 and "unknown command 'partial'" in partial.err


def test_a_name_taken_by_another_plugin_or_a_built_in_is_refused(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    site.plugin("commands", "Commands")
    site.plugin("clashing", "ClashingCommands")
    site.plugin("builtin", "BuiltinClash")

    clash = dsh("--overlay", str(overlay(tmp_path, "commands", "clashing")), "--help")
    builtin = dsh("--overlay", str(overlay(tmp_path, "builtin")), "--help")

    # Plugins loaded later are asked first (pluggy's order): `clashing` took `hello`.
    assert "plugin 'commands' cannot register command 'hello': plugin 'clashing'" in clash.err
    assert "a second hello (plugin clashing)" in clash.out
    assert "cannot register command 'web': a built-in dsh command has that name" in builtin.err


def test_a_built_in_command_with_a_global_overlay_takes_it_as_its_default(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    site.plugin("commands", "Commands")

    result = dsh("--overlay", str(overlay(tmp_path, "commands")), "plugins")

    assert result.code == 0
    assert "commands" in result.out and "yes" in result.out


def test_an_overlay_or_plugin_that_cannot_load_is_one_clear_error(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("[plugins.x\n", encoding="utf-8")
    site.plugin("fails", "FailsToStart")

    invalid = dsh("--overlay", str(broken), "anything")
    missing = dsh("--overlay", str(overlay(tmp_path, "not-installed")), "anything")
    failing = dsh("--overlay", str(overlay(tmp_path, "fails")), "anything")

    assert invalid.code == 1 and "invalid TOML" in invalid.err
    assert missing.code == 1
    assert "is the distribution that ships it (dsh-not-installed, by convention)" in missing.err
    assert failing.code == 1 and "plugin 'fails' (dsh-fails 1.0) failed to start" in failing.err


def test_a_result_that_is_not_an_exit_code_is_the_plugin_s_bug(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    site.plugin("odd", "OddCommand")

    with pytest.raises(TypeError, match="command 'odd' returned 'fine', not an exit code"):
        dsh("--overlay", str(overlay(tmp_path, "odd")), "odd")


def test_no_command_word_after_a_global_overlay_prints_the_help_with_the_plugin_commands(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    site.plugin("commands", "Commands")

    result = dsh("--overlay", str(overlay(tmp_path, "commands")))
    dangling = dsh("--overlay")

    assert result.code == 0 and result.out.startswith("usage: dsh ")
    assert "hello" in result.out
    assert dangling.code == 2 and "expected one argument" in dangling.err
