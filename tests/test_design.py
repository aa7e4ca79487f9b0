"""docs/DESIGN.md is the design in the repository: every citation of it points into it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DESIGN = REPO / "docs" / "DESIGN.md"
CITATION = re.compile(r"DESIGN(?:\.md)? ?§ ?(\d+[a-z]?)")
SECTION = re.compile(r"^## (\d+[a-z]?)\. ", re.MULTILINE)


def tracked_text_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "*.py", "*.md", "*.js", "*.mjs", "*.toml", "*.html", "*.css"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [REPO / name for name in listed if (REPO / name).is_file()]


def test_every_design_citation_names_a_section_of_docs_design() -> None:
    sections = set(SECTION.findall(DESIGN.read_text(encoding="utf-8")))
    cited: dict[str, set[str]] = {}
    for path in tracked_text_files():
        for number in CITATION.findall(path.read_text(encoding="utf-8", errors="replace")):
            cited.setdefault(number, set()).add(str(path.relative_to(REPO)))
    assert cited, "the tree cites the design"
    missing = {number: sorted(paths) for number, paths in cited.items() if number not in sections}
    assert missing == {}


def test_the_readme_links_the_design_and_it_has_a_glossary_and_the_layers() -> None:
    assert "(docs/DESIGN.md)" in (REPO / "README.md").read_text(encoding="utf-8")
    text = DESIGN.read_text(encoding="utf-8")
    for heading in ("## 1. Architecture", "### 1.1 Layers", "## 15. Glossary", "## 12. Guarantees"):
        assert heading in text
