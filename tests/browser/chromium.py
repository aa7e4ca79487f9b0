"""Debian's Chromium driven by Playwright, and a recorder of what a page complains about.

Playwright's own browser download does not work on the project's machines, so
every browser test launches `/usr/bin/chromium` (`scripts/test` installs it
with apt-get when it is missing). A missing binary is an error that says how
to fix it, never a skip: the scenario must run wherever the suite runs.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import Browser, ConsoleMessage, Dialog, Error, Page, Playwright

__all__ = [
    "ARTIFACTS",
    "CHROMIUM",
    "LAUNCH_ARGS",
    "ChromiumMissing",
    "PageWatch",
    "chromium_path",
    "launch",
    "publish",
]

CHROMIUM = Path("/usr/bin/chromium")
# We run as root in containers (no sandbox possible), without a GPU, and the
# browser must not phone home or update itself in the middle of a test.
LAUNCH_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-output" / "browser"


class ChromiumMissing(RuntimeError):
    """`/usr/bin/chromium` is not there; the message says how to install it."""


def chromium_path() -> Path:
    """The Chromium binary; raises `ChromiumMissing` naming the fix when it is absent."""
    if CHROMIUM.is_file() and shutil.which(str(CHROMIUM)) is not None:
        return CHROMIUM
    raise ChromiumMissing(
        f"{CHROMIUM} is missing: the browser tests drive Debian's chromium "
        "(Playwright's own download does not work here). Install it with "
        "`apt-get install -y chromium` (./scripts/test does this when run as root)."
    )


def launch(playwright: Playwright) -> Browser:
    """A headless Debian Chromium."""
    return playwright.chromium.launch(
        executable_path=str(chromium_path()), headless=True, args=list(LAUNCH_ARGS)
    )


@dataclass
class PageWatch:
    """Everything a page reported that a clean run never shows.

    Console messages of type "error", uncaught exceptions (`pageerror`) and
    JavaScript dialogs (each dismissed, so a stray `alert()` cannot hang the
    page) are recorded in order.
    """

    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def attach(self, page: Page) -> PageWatch:
        page.on("console", self._console)
        page.on("pageerror", self._page_error)
        page.on("dialog", self._dialog)
        return self

    @property
    def problems(self) -> list[str]:
        """Every recorded complaint, labelled; empty for a clean run."""
        return [
            *(f"console error: {text}" for text in self.console_errors),
            *(f"page error: {text}" for text in self.page_errors),
            *(f"dialog: {text}" for text in self.dialogs),
        ]

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.console_errors.append(f"{message.text} ({message.location.get('url', '')})")

    def _page_error(self, error: Error) -> None:
        self.page_errors.append(f"{error.name}: {error.message}")

    def _dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()


def publish(path: Path, folder: str) -> Path:
    """Copy an artifact to `test-output/browser/<folder>/` (gitignored) and return the copy."""
    target = ARTIFACTS / folder / path.name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, target)
    return target
