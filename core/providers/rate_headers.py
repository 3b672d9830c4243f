"""The providers' rate-limit headers, read as "wait this long before the next request".

Anthropic sends `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-remaining` with a
`…-reset` time (RFC 3339); OpenAI sends `x-ratelimit-remaining-{requests,tokens}` with a
`x-ratelimit-reset-{requests,tokens}` duration (`1s`, `6m0s`, `20ms`). When any budget is spent
(remaining 0), the wait is until its reset (capped by the provider's `retry_after_cap_s` where it
is taken: `promptdesk.core.providers.waits`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from datetime import datetime

_ANTHROPIC = re.compile(r"anthropic-ratelimit-([a-z-]+)-remaining")
_OPENAI = re.compile(r"x-ratelimit-remaining-([a-z-]+)")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def rate_limit_wait(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds until a spent budget resets, the longest if several are spent; None when none is."""
    spent = spent_budget(headers, now)
    return spent[0] if spent else None


def spent_budget(headers: Mapping[str, str] | None, now: float | None = None) -> tuple[float, str] | None:
    """(seconds until it resets, which budget: `request`, `token`, `input-token`...) of the spent
    budget that resets last; None when no budget is spent (or a spent one gives no reset time)."""
    if not headers:
        return None
    lower = {str(k).lower(): str(v) for k, v in headers.items()}
    now = time.time() if now is None else now
    waits: list[tuple[float, str]] = []
    for key, value in lower.items():
        wait = None
        if (match := _ANTHROPIC.fullmatch(key)) and _spent(value):
            wait = _until(lower.get(f"anthropic-ratelimit-{match.group(1)}-reset"), now)
        elif (match := _OPENAI.fullmatch(key)) and _spent(value):
            wait = _duration(lower.get(f"x-ratelimit-reset-{match.group(1)}"))
        if wait is not None and match is not None:
            waits.append((wait, match.group(1).removesuffix("s")))
    return max(waits) if waits else None


def _spent(value: str) -> bool:
    try:
        return float(value) <= 0
    except ValueError:
        return False


def _until(stamp: str | None, now: float) -> float | None:
    """Seconds from `now` to an RFC 3339 time."""
    if not stamp:
        return None
    try:
        return max(0.0, datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() - now)
    except (ValueError, OverflowError, OSError):
        return None


def _duration(text: str | None) -> float | None:
    """`6m0s` -> 360.0; None when it is not a duration."""
    parts = _DURATION.findall(text or "")
    return sum(float(n) * _UNIT_S[unit] for n, unit in parts) if parts else None
