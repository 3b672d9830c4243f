"""The providers' rate-limit headers, read as "wait this long before the next request".

Anthropic sends `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-remaining` with a
`…-reset` time (RFC 3339); OpenAI sends `x-ratelimit-remaining-{requests,tokens}` with a
`x-ratelimit-reset-{requests,tokens}` duration (`1s`, `6m0s`, `20ms`), as Groq does. Together and
OpenRouter send one budget without a suffix, `x-ratelimit-remaining` with `x-ratelimit-reset`: seconds
to wait (Together), or the reset's time since the epoch in milliseconds (OpenRouter) or seconds, read by
its size; a duration as above is read too. When any budget is spent
(remaining 0), the wait is until its reset (capped by the provider's `retry_after_cap_s` where it
is taken: `promptdesk.core.providers.waits`).
"""

from __future__ import annotations

import math
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
        wait, name = None, ""
        if (match := _ANTHROPIC.fullmatch(key)) and _spent(value):
            wait, name = _until(lower.get(f"anthropic-ratelimit-{match.group(1)}-reset"), now), match.group(1)
        elif (match := _OPENAI.fullmatch(key)) and _spent(value):
            wait, name = _duration(lower.get(f"x-ratelimit-reset-{match.group(1)}")), match.group(1)
        elif key == "x-ratelimit-remaining" and _spent(value):
            wait, name = _reset(lower.get("x-ratelimit-reset"), now), "requests"
        if wait is not None:
            waits.append((wait, name.removesuffix("s")))
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


def _reset(text: str | None, now: float) -> float | None:
    """An un-suffixed `x-ratelimit-reset` as seconds from `now`: a number is seconds to wait, unless it
    is a time since the epoch (in milliseconds past 1e12, in seconds past 1e9); else a duration (`1s`)."""
    try:
        number = float(text or "")
    except ValueError:
        return _duration(text)
    if not math.isfinite(number):
        return None
    return max(0.0, number / 1000 - now if number > 1e12 else number - now if number > 1e9 else number)


def _duration(text: str | None) -> float | None:
    """`6m0s` -> 360.0; None when it is not a duration."""
    parts = _DURATION.findall(text or "")
    return sum(float(n) * _UNIT_S[unit] for n, unit in parts) if parts else None
