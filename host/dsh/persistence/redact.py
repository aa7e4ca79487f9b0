"""`redacted(url)`: a store URL as messages show it, without its password."""

from __future__ import annotations

from urllib.parse import SplitResult, parse_qsl, urlencode, urlsplit

__all__ = ["join_url", "redacted"]


def redacted(url: str) -> str:
    """`url` without a password (in its user part or a `password=` parameter)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<a malformed URL>"
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}@{host}"
    query = [
        (key, "***" if key == "password" else value)
        for key, value in parse_qsl(parts.query, keep_blank_values=True)
    ]
    return join_url(parts._replace(netloc=netloc, query=urlencode(query, safe="/*")))


def join_url(parts: SplitResult) -> str:
    """`urlunsplit` that keeps `//` before an empty host (`postgresql:///db`), as libpq needs."""
    url = f"{parts.scheme}://{parts.netloc}{parts.path}"
    if parts.query:
        url += f"?{parts.query}"
    if parts.fragment:
        url += f"#{parts.fragment}"
    return url
