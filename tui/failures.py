"""Why an actor failed, in words an operator can act on: the kind of a failure's recorded reason.

The engine records every failed turn as a `system` event whose `reason` is the provider's error
("connection refused", "HTTP 401 ...", "Response timeout", "rate limited, retry after 20 s").
The stage shows that reason on the system line and notifies once per kind of failure.
"""

from __future__ import annotations

import re

_KINDS = (
    ("rate limit", re.compile(r"\b429\b|rate.?limit|too many requests|retry.?after", re.I)),
    ("authentication", re.compile(r"\b40[13]\b|auth|api.?key|permission|forbidden", re.I)),
    ("timeout", re.compile(r"time.?out|timed out", re.I)),
    ("connection", re.compile(r"connect|refused|unreachable|dns|name resolution|reset by peer|network", re.I)),
    ("server error", re.compile(r"\b5\d\d\b|overloaded|server error", re.I)),
)


def failure_kind(reason: str) -> str:
    """`rate limit`, `authentication`, `timeout`, `connection`, `server error`, else `other`."""
    return next((kind for kind, pattern in _KINDS if pattern.search(reason)), "other")
