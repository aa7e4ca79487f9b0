"""The shape of `host/dsh`: no import circle, every import down the layers, small modules."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.imports import (
    LAYERS,
    ROOT,
    against_layers,
    circles,
    import_graph,
    main,
)

#: The Host is a composition root (docs/DESIGN.md §1), and no module holds two ideas.
HOST_LINES = 300
MODULE_LINES = 700


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_the_tree_has_no_import_circle() -> None:
    assert circles(import_graph()) == []


def test_every_import_goes_down_the_layers() -> None:
    assert against_layers(import_graph()) == []


def test_every_folder_of_the_package_is_a_layer() -> None:
    folders = {f"dsh.{path.name}" for path in (ROOT / "dsh").iterdir() if path.is_dir()}
    folders.discard("dsh.__pycache__")
    assert folders <= {folder for layer in LAYERS for folder in layer}


def test_the_host_is_a_composition_root_and_no_module_is_over_700_lines() -> None:
    host = ROOT / "dsh" / "host" / "host.py"
    assert len(host.read_text(encoding="utf-8").splitlines()) <= HOST_LINES
    long = {
        str(path.relative_to(ROOT)): lines
        for path in (ROOT / "dsh").rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MODULE_LINES
    }
    assert long == {}


def test_a_circle_through_a_deferred_import_or_a_package_is_found(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "dsh/__init__.py": "",
            "dsh/a.py": "def f():\n    from . import b  # deferred: still an import\n",
            "dsh/b.py": "from .pkg import thing\n",
            "dsh/pkg/__init__.py": "from .inner import thing\n",
            "dsh/pkg/inner.py": "from ..a import f\nthing = 1\n",
            "dsh/typed.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\n"
            ),
        },
    )
    graph = import_graph(root)
    assert graph["dsh.typed"] == set()  # never runs
    assert graph["dsh.b"] == {"dsh.pkg"}  # a name, not a module: the package
    assert circles(graph) == [["dsh.a", "dsh.b", "dsh.pkg", "dsh.pkg.inner"]]


def test_an_import_up_or_beside_the_layers_is_named() -> None:
    graph = {
        "dsh.base.x": {"dsh.session.log"},
        "dsh.session.log": {"dsh.base.x"},
        "dsh.wake.index": {"dsh.relay.rounds"},
        "dsh.relay.rounds": set(),
        "dsh.elsewhere.y": set(),
        "dsh.web.api": {"dsh.elsewhere.y"},
    }
    assert against_layers(graph) == [
        "dsh.base -> dsh.session (a layer above)",
        "dsh.wake -> dsh.relay (a layer beside)",
        "dsh.web -> dsh.elsewhere (a folder outside LAYERS)",
    ]


def test_the_command_prints_the_graph_and_exits_zero_on_this_tree(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([]) == 0
    assert "dsh.host.host -> " in capsys.readouterr().out
    assert main(["--layers"]) == 0
    assert "dsh.base -> (nothing)" in capsys.readouterr().out
