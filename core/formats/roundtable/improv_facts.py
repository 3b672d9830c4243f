"""Reading a roundtable request the way the improviser needs: the facts block and who is asked."""

from __future__ import annotations

import re
from typing import Any

import yaml

from promptdesk.core.protocol.bounded import Unbounded, load_yaml

from promptdesk.core.providers.base import Request

_FENCE = re.compile(r"```ya?ml\s*\n(.*?)```", re.S)
STANCES = ("Go ahead now, at full scope", "Go ahead in small, reversible steps",
           "Hold off until the main risks are understood")
"""The offline participants' positions: the same three for any topic, so agreement can be counted."""
PHASE_LEAN = {"dreamer": 0, "yellow": 0, "green": 0, "opening": 0, "realist": 1, "white": 1, "blue": 1,
              "red": 1, "discussion": 1, "rebuttal": 1, "closing": 1, "critic": 2, "black": 2}
"""Which stance a phase pulls towards (dreamers dream, critics hold off)."""


def facts(request: Request) -> dict[str, Any]:
    """The YAML facts block of the request's last user message ({} when there is none)."""
    text = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
    match = _FENCE.search(text)
    try:
        data = load_yaml(match.group(1)) if match else None
    except (yaml.YAMLError, Unbounded):
        data = None
    return data if isinstance(data, dict) else {}


def last_user(request: Request) -> str:
    return next((m.content for m in reversed(request.messages) if m.role == "user"), "")


def as_block(data: dict[str, Any]) -> str:
    """A fenced YAML block, as spec 002 asks every roundtable answer to be."""
    return "```yaml\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100) + "```\n"
