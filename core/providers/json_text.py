"""A text's JSON string, its lines escaped once each however many requests carry them.

A crowd's parallel beat sends each spoken line to every other actor, inside each one's own update,
and each update is encoded three times on its way out: in the request's body, in `prompts.jsonl`'s
canonical text of the request, and once more inside that line's `append` string. At fifty actors
that is 150 encodings a beat of the same fifty lines, paid between the beat's end and the last
request leaving.

JSON escapes a string character by character, so the escaped form of a text is the escaped forms of
its pieces joined by the escaped separator, wherever the text is cut. `escaped` cuts at each line
(or at another separator: `"\\n"` as it appears inside JSON text) and keeps each piece's escaped
form for the next text that holds it. The result is exactly `json.dumps(text, ensure_ascii=False)`
without its quotes; only the time differs.
"""

from __future__ import annotations

import json

MEMO_CHARS = 250_000
"""How many characters of pieces are remembered before the memory starts again empty: a beat's
lines at fifty actors are about 15,000, and a sweep's runs share the one memory (a larger one
raised the sweep benchmark's peak by 7 MB)."""
_SHORT = 256
"""A text shorter than this is escaped whole: nothing to gain."""

_memo: dict[str, str] = {}
_held = 0


def escaped(text: str, separator: str = "\n") -> str:
    """`json.dumps(text, ensure_ascii=False)` without its quotes, each `separator`-cut piece escaped
    once (`_memo`) and then reused."""
    global _held
    if len(text) < _SHORT:
        return _plain(text)
    pieces = text.split(separator)
    if len(pieces) < 3:
        return _plain(text)
    if _held > MEMO_CHARS:
        _memo.clear()
        _held = 0
    out = []
    for piece in pieces:
        done = _memo.get(piece)
        if done is None:
            done = _memo[piece] = _plain(piece)
            _held += len(piece)
        out.append(done)
    return _plain(separator).join(out)


def message_json(role: str, content: str, compact: bool = False) -> str:
    """`json.dumps({"role": role, "content": content}, ensure_ascii=False)`, with the SDK's
    separators (no spaces) when `compact`."""
    if compact:
        return '{"role":"' + _plain(role) + '","content":"' + escaped(content) + '"}'
    return '{"role": "' + _plain(role) + '", "content": "' + escaped(content) + '"}'


def _plain(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]
