"""What a response body says when it is not the answer asked for: an error object (in an error
status, or in a 200), a plain-text error, an HTML page from a proxy or a gateway. Each is read into
one short line a person can act on, never pasted whole."""

from __future__ import annotations

import json
import re
from typing import Any

ERROR_TYPE_STATUS = {
    "invalid_request_error": 400, "authentication_error": 401, "permission_error": 403,
    "not_found_error": 404, "request_too_large": 413, "rate_limit_error": 429, "rate_limit_exceeded": 429,
    "api_error": 500, "server_error": 500, "timeout_error": 504, "overloaded_error": 529,
}
"""Status implied by the error `type` of an error that arrived inside a 200 stream."""

READABLE_MAX = 240
"""The most characters of a body's text an error message quotes."""
_TITLE_RE = re.compile(r"<title[^>]{0,200}>([^<]{0,2000})</title>", re.IGNORECASE)
_MARKUP_RE = re.compile(r"<[^>]{0,2000}>")


def readable(text: str, limit: int = READABLE_MAX) -> str:
    """`text` as one short line: an HTML page by its title (else its text without tags), white
    space folded, at most `limit` characters (cut with "…")."""
    if _is_html(text):
        title = _TITLE_RE.search(text[:20_000])
        text = title.group(1) if title and title.group(1).strip() else _MARKUP_RE.sub(" ", text[:20_000])
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit - 1] + "…"


def _is_html(text: str) -> bool:
    head = text[:2000].lstrip().lower()
    return head.startswith(("<!doctype html", "<html", "<head", "<body")) or "<title" in head


def error_detail(body: Any, fallback: str) -> tuple[str | None, str]:
    """(error type, 'type: message') from an API error body, whichever shape it has: an error
    object, an error that is a plain string, or a body that is text (an HTML page by its title)."""
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(body, dict) and "error" not in body and _is_answer(body):
        error = None  # an answer's `type` ("message") is not an error's
    if isinstance(error, dict) and (error.get("message") or error.get("type")):
        kind = error.get("type") or error.get("code")
        kind = str(kind) if kind else None
        return kind, f"{kind}: {error.get('message')}" if kind else str(error.get("message"))
    if isinstance(error, str) and error.strip():
        return None, readable(error)
    if isinstance(error, dict) and isinstance(error.get("detail"), str) and error["detail"].strip():
        return None, readable(error["detail"])  # a FastAPI server's error (llama-cpp-python's)
    return None, readable(fallback)


def _is_answer(body: dict[str, Any]) -> bool:
    """Whether a body is shaped as an answer: an Anthropic `message`, an OpenAI `chat.completion`."""
    return body.get("type") == "message" or str(body.get("object", "")).startswith("chat.completion")


def error_status(kind: str | None, body: Any) -> int:
    """The status an error object inside a 200 implies: by its type, else by a `code` that is an
    HTTP status (vLLM's), else 500."""
    if kind in ERROR_TYPE_STATUS:
        return ERROR_TYPE_STATUS[kind]
    error = body.get("error", body) if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, int) and 400 <= code <= 599 else 500


def unanswered(text: str, content_type: str) -> tuple[int | None, str]:
    """What a 200 body that is not an answer holds: (the status its error object implies, the
    error) when it names one, else (None, its content type and a readable line of it). JSON that
    names no error is described by its keys, never quoted: it may hold a model's text."""
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict):
        kind, detail = error_detail(body, "")
        if detail:
            return error_status(kind, body), detail
    media = content_type.split(";")[0].strip() or "no content type"
    if isinstance(body, dict):
        return None, f"{media}: a JSON object with the keys {', '.join(sorted(map(str, body))[:8]) or '(none)'}"
    if body is not None:
        return None, f"{media}: a JSON {type(body).__name__}"
    if _is_html(text) or not text.strip():
        return None, f"{media}: {readable(text) or 'an empty body'}"
    if text.lstrip().startswith(("data:", "event:", ":")):
        return None, f"an event stream labelled {media}, which is not read as one; its text is not quoted"
    return None, f"{media}: {len(text):,} characters of text that is not JSON, not quoted (it may hold a model's words)"
