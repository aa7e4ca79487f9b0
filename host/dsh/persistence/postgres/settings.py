"""The PostgreSQL store's settings: a libpq URL plus dsh's own two parameters.

    postgresql://[USER[:PASSWORD]@][HOST][:PORT]/DATABASE[?PARAM=VALUE&…]

Everything in the URL goes to libpq unchanged (`host=/run/postgresql` for a
unix socket, `sslmode=…`, `connect_timeout=…`), except dsh's own
parameters, which are taken out first:

- `schema=NAME` — the PostgreSQL schema that holds dsh's tables (default
  `dsh`; created by the migrations);
- `pool_size=N` — at most this many connections per host (default 10).

The password comes from the URL, `$PGPASSWORD` or `~/.pgpass` (libpq reads
the last two itself), never from an overlay. Messages name the store with
`redacted(url)`: the URL without its password.
"""

from __future__ import annotations

import re
from typing import Annotated, Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from ..redact import join_url, redacted

__all__ = ["DEFAULT_POOL_SIZE", "DEFAULT_SCHEMA", "PostgresSettings", "redacted", "split_url"]

DEFAULT_SCHEMA = "dsh"
DEFAULT_POOL_SIZE = 10
SCHEMES = ("postgresql", "postgres")
_OWN = ("schema", "pool_size")
_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def _schema_name(value: str) -> str:
    if _SCHEMA_NAME.fullmatch(value) is None:
        raise ValueError(
            "not a schema name: expected 1-63 lowercase letters, digits or '_', "
            "not starting with a digit"
        )
    return value


def _libpq_url(value: str) -> str:
    try:
        parts = urlsplit(value)
    except ValueError as error:
        raise ValueError(f"not a URL: {error}") from None
    if parts.scheme not in SCHEMES:
        raise ValueError(f"expected a postgresql:// URL, not {redacted(value)!r}")
    if not parts.path.strip("/"):
        raise ValueError(f"{redacted(value)} names no database (postgresql://…/DATABASE)")
    return value


class PostgresSettings(BaseModel):
    """`postgresql://…`: the libpq `url` (without dsh's parameters), `schema`, `pool_size`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: Annotated[str, AfterValidator(_libpq_url)]
    schema_name: Annotated[str, AfterValidator(_schema_name)] = Field(
        default=DEFAULT_SCHEMA, alias="schema"
    )
    pool_size: Annotated[int, Field(ge=1, le=1000)] = DEFAULT_POOL_SIZE

    @property
    def database(self) -> str:
        return urlsplit(self.url).path.strip("/")

    def describe(self) -> str:
        """The store in messages: the URL without its password, and the schema."""
        where = redacted(self.url)
        return (
            where if self.schema_name == DEFAULT_SCHEMA else f"{where} (schema {self.schema_name})"
        )


def split_url(scheme: str, rest: str) -> dict[str, Any]:
    """The settings fields of the URL `scheme:rest`: dsh's parameters taken out of it.

    Raises `ValueError` naming a parameter given twice.
    """
    parts = urlsplit(f"{scheme}:{rest}")
    libpq: list[tuple[str, str]] = []
    fields: dict[str, Any] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key in _OWN:
            if key in fields:
                raise ValueError(f"{key!r} is given twice")
            fields[key] = value
        else:
            libpq.append((key, value))
    fields["url"] = join_url(parts._replace(query=urlencode(libpq, quote_via=quote, safe="/")))
    return fields
