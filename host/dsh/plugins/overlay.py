"""Overlays (public format): which plugins a Host loads, with their configuration.

An overlay is a TOML file, conventionally `overlays/<name>/overlay.toml`:

```toml
[host]                       # optional host settings
model = "demo"               # a model adapter: demo | absent | openai | scripted:PATH
wake_cold_sessions = true    # wake cold Sessions when a plugin needs them (default false)
idle_seconds = 300           # hibernate a Session idle this long; 0 never (default 300)

[host.openai]                # a model adapter's settings, validated by that adapter's
base_url = "https://api.deepseek.com"   # `Settings` model (`dsh.models.registry`); for
model = "deepseek-v4-flash"             # openai the environment fills what is not set.
thinking = "enabled"                    # Keys never live in an overlay.

[store]                      # optional: how hosts sharing a store hold their Sessions
lease_ttl_seconds = 10       # a lease lasts this long unrenewed (failover time after a crash)
lease_renew_seconds = 3      # leases are renewed this often (less than the TTL)

[plugins.tool-schedule]      # a plugin by entry-point name; the table is its config
# distribution = "dsh-tool-schedule"   reserved key: where the plugin ships

[plugins.client-ui-schedule]
```

The overlay is the allowlist: only the plugins it names are loaded, in file
order, and no overlay at all (`Overlay.default()`) loads none. Every value is
parsed strictly (unknown keys and wrong types are errors); a problem raises
`OverlayError`, which names the file and the offending key path. A relative
`scripted:` model path is resolved against the overlay's directory.

Like plugin tables, which the loader validates with each plugin's `Config`,
the `[host.NAME]` tables and the `[host] model` name are carried here as
written and validated by the model registry (`dsh.models.registry.check_host`),
which knows the adapters and their `Settings` models: this module knows none.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from ..base.validation import Problem, key_path, problems
from .errors import OverlayError

__all__ = [
    "DEFAULT_IDLE_SECONDS",
    "OVERLAY_FILE",
    "HostSettings",
    "Overlay",
    "PluginSpec",
    "StoreSettings",
    "load_overlay",
    "parse_overlay",
]

OVERLAY_FILE = "overlay.toml"
DEFAULT_IDLE_SECONDS = 300.0
# A day: longer is surely a typo (milliseconds?); 0 turns hibernation off.
MAX_IDLE_SECONDS = 86_400.0
_SCRIPTED = "scripted:"

# Entry-point names become URL segments (`/plugins/<name>/...`), so keep them tame.
_PLUGIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
# PEP 508 distribution names.
_DISTRIBUTION_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")


def _plugin_name(value: str) -> str:
    if _PLUGIN_NAME.fullmatch(value) is None:
        raise ValueError(
            "not a plugin name: expected 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return value


def _distribution_name(value: str) -> str:
    if _DISTRIBUTION_NAME.fullmatch(value) is None:
        raise ValueError(
            "not a distribution name: expected letters, digits, '.', '_' or '-', "
            "starting and ending with a letter or digit"
        )
    return value


@dataclass(frozen=True, slots=True)
class HostSettings:
    """The overlay's `[host]` table.

    `model` is None when the overlay leaves it to the host; `model_settings`
    maps an adapter name to its settings table (`[host.openai]`) as written,
    for `dsh.models.resolve_model(..., settings=...)` to validate.
    `wake_cold_sessions` turns on the wake index (`dsh.wake`): a cold Session
    is made live when a plugin's `dsh_session_wake_at` says so.
    `idle_seconds` is how long a live Session may sit idle (no turn, no
    watcher, no queued input) before it is hibernated; 0 never hibernates.
    """

    model: str | None = None
    model_settings: Mapping[str, Mapping[str, Any]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    wake_cold_sessions: bool = False
    idle_seconds: float = DEFAULT_IDLE_SECONDS


@dataclass(frozen=True, slots=True)
class StoreSettings:
    """The overlay's `[store]` table: the leases of a store shared by several hosts.

    Never the store's URL or password (`--store`, `$DSH_STORE`, `PGPASSWORD`
    say where and how): only how long a lease lasts unrenewed and how often
    it is renewed (`dsh.host.leases.LeaseSettings` checks them together).
    """

    lease_ttl_seconds: float = 10.0
    lease_renew_seconds: float = 3.0


@dataclass(frozen=True, slots=True)
class PluginSpec:
    """One plugin an overlay enables.

    `config` is the plugin's table without the reserved `distribution` key;
    `distribution` is where the plugin ships, if the overlay says so; `source`
    is the overlay file that named it (used in error messages).
    """

    name: str
    config: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    distribution: str | None = None
    source: Path | None = None


@dataclass(frozen=True, slots=True)
class Overlay:
    """A parsed overlay: host settings and the plugins to load, in file order."""

    path: Path | None
    host: HostSettings
    plugins: tuple[PluginSpec, ...]
    store: StoreSettings = field(default_factory=StoreSettings)

    @classmethod
    def default(cls) -> Overlay:
        """The default tree: no overlay, so no plugin is loaded even if installed."""
        return cls(path=None, host=HostSettings(), plugins=())


_TABLE = ConfigDict(strict=True, extra="forbid", frozen=True)

_PluginName = Annotated[str, AfterValidator(_plugin_name)]


class _HostTable(BaseModel):
    """`[host]`: the host's own keys; sub-tables are model settings, kept raw."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True)

    model: str | None = None
    wake_cold_sessions: bool = False
    idle_seconds: Annotated[float, Field(ge=0, le=MAX_IDLE_SECONDS)] = DEFAULT_IDLE_SECONDS

    @field_validator("idle_seconds", mode="before")
    @classmethod
    def _seconds(cls, value: object) -> object:
        # TOML has integers and floats; strict mode would refuse `idle_seconds = 300`.
        return float(value) if type(value) is int else value

    def model_settings(self) -> dict[str, Mapping[str, Any]]:
        return {
            name: MappingProxyType(dict(table))
            for name, table in (self.model_extra or {}).items()
            if isinstance(table, dict)
        }

    def stray_keys(self) -> list[str]:
        """`[host]` keys that are neither a host setting nor a model's table."""
        return [
            name for name, value in (self.model_extra or {}).items() if not isinstance(value, dict)
        ]


def _seconds(value: object) -> object:
    # TOML has integers and floats; strict mode would refuse `lease_ttl_seconds = 10`.
    return float(value) if type(value) is int else value


_LeaseSeconds = Annotated[float, BeforeValidator(_seconds), Field(gt=0, le=3600)]


class _StoreTable(BaseModel):
    """`[store]`: lease timing only (see `StoreSettings`)."""

    model_config = _TABLE

    lease_ttl_seconds: _LeaseSeconds = 10.0
    lease_renew_seconds: _LeaseSeconds = 3.0

    @model_validator(mode="after")
    def _renewed_in_time(self) -> _StoreTable:
        if self.lease_renew_seconds >= self.lease_ttl_seconds:
            raise ValueError(
                f"lease_renew_seconds ({self.lease_renew_seconds:g}) must be less than "
                f"lease_ttl_seconds ({self.lease_ttl_seconds:g})"
            )
        return self


class _PluginTable(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", frozen=True)

    distribution: Annotated[str, AfterValidator(_distribution_name)] | None = None


class _OverlayFile(BaseModel):
    model_config = _TABLE

    host: _HostTable = Field(default_factory=_HostTable)
    store: _StoreTable = Field(default_factory=_StoreTable)
    plugins: dict[_PluginName, _PluginTable] = Field(default_factory=dict)


def load_overlay(path: str | Path) -> Overlay:
    """Read and parse the overlay at `path` (the file, or a directory holding `overlay.toml`).

    Raises `OverlayError` naming the file when it cannot be read, is not valid
    TOML (with tomllib's line and column), or does not match the format.
    """
    file = Path(path)
    if file.is_dir():
        file = file / OVERLAY_FILE
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError as error:
        raise OverlayError(
            file,
            [
                (
                    "",
                    "cannot read overlay: there is no such file; pass an overlay file or a "
                    f"directory holding {OVERLAY_FILE} (such as overlays/web-schedule)",
                )
            ],
        ) from error
    except (OSError, UnicodeDecodeError) as error:
        raise OverlayError(file, [("", f"cannot read overlay: {error}")]) from error
    return parse_overlay(text, file)


def parse_overlay(text: str, path: Path | None = None) -> Overlay:
    """Parse overlay TOML `text`; `path` is used in errors and to resolve relative paths."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise OverlayError(path, [("", f"invalid TOML: {error}")]) from error
    try:
        parsed = _OverlayFile.model_validate(raw)
    except ValidationError as error:
        raise _invalid(path, error) from error
    stray = parsed.host.stray_keys()
    if stray:
        known = ", ".join(_HostTable.model_fields)
        raise OverlayError(
            path,
            [
                (
                    key_path(("host", name)),
                    f"unknown host setting (the host's settings are: {known}; "
                    "a [host.NAME] table holds the settings of model adapter NAME)",
                )
                for name in stray
            ],
        )
    return Overlay(
        path=path,
        host=HostSettings(
            model=_resolve_model(parsed.host.model, path),
            model_settings=MappingProxyType(parsed.host.model_settings()),
            wake_cold_sessions=parsed.host.wake_cold_sessions,
            idle_seconds=parsed.host.idle_seconds,
        ),
        plugins=tuple(_spec(name, table, path) for name, table in parsed.plugins.items()),
        store=StoreSettings(
            lease_ttl_seconds=parsed.store.lease_ttl_seconds,
            lease_renew_seconds=parsed.store.lease_renew_seconds,
        ),
    )


def _spec(name: str, table: _PluginTable, path: Path | None) -> PluginSpec:
    return PluginSpec(
        name=name,
        config=MappingProxyType(dict(table.model_extra or {})),
        distribution=table.distribution,
        source=path,
    )


def _resolve_model(model: str | None, path: Path | None) -> str | None:
    if model is None or path is None or not model.startswith(_SCRIPTED):
        return model
    script = model[len(_SCRIPTED) :].strip()
    if not script:
        return model  # the adapter reports the missing script
    resolved = Path(script).expanduser()
    if not resolved.is_absolute():
        resolved = path.parent / resolved
    return f"{_SCRIPTED}{resolved}"


def _invalid(path: Path | None, error: ValidationError) -> OverlayError:
    found = problems(error, location=key_path)
    plugins = {str(item.loc[1]) for item in found if len(item.loc) > 1 and item.loc[0] == "plugins"}
    return OverlayError(
        path,
        [(item.where, _message(item)) for item in found],
        plugin=plugins.pop() if len(plugins) == 1 else None,
    )


def _message(item: Problem) -> str:
    """pydantic's message, except that an unknown table lists the tables there are."""
    if item.type != "extra_forbidden" or len(item.loc) != 1:
        return item.message
    tables = list(_OverlayFile.model_fields)
    close = difflib.get_close_matches(str(item.loc[0]), tables, n=1)
    hint = f"did you mean [{close[0]}]? " if close else ""
    return f"unknown table ({hint}an overlay has the tables {', '.join(tables)})"
