"""The runtime import graph of `host/dsh`: the circles in it, and imports against the layers.

    python -m tests.support.imports            # the graph, one module per line, then any problem
    python -m tests.support.imports --layers   # each folder and the folders it imports

An edge `a -> b` means module `a` runs `import b` (or `from b import …`,
or `from . import b`) when it or one of its functions runs: imports under
`if TYPE_CHECKING:` are left out (they never run), imports inside a
function are kept (a deferred import is still an import, and hiding a
circle behind one is what this check exists to catch). `from pkg import
name` counts as an import of `pkg.name` when that is a module of the tree,
else of the package `pkg` itself (its `__init__`).

The folders of `host/dsh` are layers (docs/DESIGN.md §1): a module may
import its own folder and the layers below it, never one above or beside it
(`LAYERS`, lowest first; folders on one line are beside each other).

The check reads the source with `ast`; it imports nothing, so it runs
without the project's dependencies installed. Exit status 1 when the graph
has a circle or an import against the layers.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

__all__ = ["LAYERS", "against_layers", "circles", "import_graph", "main"]

ROOT = Path(__file__).resolve().parents[2] / "host"
PACKAGE = "dsh"


#: The layers of `dsh`, lowest first; the folders of one layer never import each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("dsh.base",),
    ("dsh.session",),
    ("dsh.persistence", "dsh.models"),
    ("dsh.agents", "dsh.attention", "dsh.search"),
    ("dsh.plugins",),
    ("dsh.wake", "dsh.relay"),
    ("dsh.host",),
    ("dsh.web",),
    ("dsh.cli",),
    ("dsh.testing",),
    ("dsh",),
)


def _modules(root: Path, package: str) -> dict[str, Path]:
    """Every module of `package` under `root`, by dotted name (`dsh.web.api`)."""
    found: dict[str, Path] = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: all of them but those under `if TYPE_CHECKING:`."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                yield from _runtime_imports(ast.Module(body=[child], type_ignores=[]))
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        yield from _runtime_imports(node)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute name a relative `from … import` starts from."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    # A package's own `from . import x` is relative to the package, not its parent.
    keep = len(base) - node.level + (1 if is_package else 0)
    prefix = base[:keep]
    return ".".join([*prefix, node.module] if node.module else prefix)


def import_graph(root: Path = ROOT, package: str = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules of the same tree it imports at run time."""
    modules = _modules(root, package)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in _runtime_imports(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = _resolve(name, is_package, node)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in modules else base)
            for target in targets:
                if target in modules and target != name:
                    graph[name].add(target)
    return graph


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph) + 100))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def layers(graph: Mapping[str, set[str]], package: str = PACKAGE) -> dict[str, set[str]]:
    """The graph folded to the package's first-level folders (`dsh.web`, `dsh.session`, …)."""

    def layer(module: str) -> str:
        parts = module.split(".")
        return ".".join(parts[:2]) if len(parts) > 1 else module

    folded: dict[str, set[str]] = {}
    for source, targets in graph.items():
        into = folded.setdefault(layer(source), set())
        into.update(layer(target) for target in targets if layer(target) != layer(source))
    return folded


def against_layers(graph: Mapping[str, set[str]]) -> list[str]:
    """Every import of a layer above, or beside, the importer's: `a -> b (why)`."""
    rank = {folder: level for level, folders in enumerate(LAYERS) for folder in folders}
    found = []
    for source, targets in sorted(layers(graph).items()):
        for target in sorted(targets):
            if source not in rank or target not in rank:
                found.append(f"{source} -> {target} (a folder outside LAYERS)")
            elif rank[target] > rank[source]:
                found.append(f"{source} -> {target} (a layer above)")
            elif rank[target] == rank[source]:
                found.append(f"{source} -> {target} (a layer beside)")
    return found


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    graph = import_graph()
    shown = layers(graph) if "--layers" in args else graph
    for module in sorted(shown):
        print(f"{module} -> {', '.join(sorted(shown[module])) or '(nothing)'}")  # noqa: T201
    found = circles(graph)
    for circle in found:
        print(f"circle: {' <-> '.join(circle)}", file=sys.stderr)  # noqa: T201
    wrong = against_layers(graph)
    for problem in wrong:
        print(f"against the layers: {problem}", file=sys.stderr)  # noqa: T201
    if found or wrong:
        print(  # noqa: T201
            f"{len(found)} import circle(s) and {len(wrong)} import(s) against the layers"
            f" in {PACKAGE}",
            file=sys.stderr,
        )
        return 1
    print(f"no import circle and none against the layers among {len(graph)} modules")  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
