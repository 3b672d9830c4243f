"""`prompts.jsonl`: every request sent to every actor and judge, recorded once, read back exactly.

A request is kept as its canonical JSON text (`request_text`: `system` and `messages` first, then the
other fields of `Request` in their declared order, `ensure_ascii=False`). Each line of the file is one
request, numbered from 1 by `id`, with the routing facts beside it:

    {"id": 7, "t": 12.5, "to": "bob", "purpose": "turn", "beat": 3, "request": {...}}          whole
    {"id": 9, "t": 14.1, "to": "bob", "purpose": "turn", "beat": 4,
     "extends": 7, "keep": 18234, "append": "...", "length": 18811}                            delta
    {"id": 12, "t": 20.3, "to": "bob", "purpose": "turn", "beat": 5,
     "extends": 9, "keep": 3520, "copy": [3980, 4410], "append": "...", "length": 4702}        sliding

A delta means: the request's text is the first `keep` characters of request `extends` (the same
recipient's previous request), then (when `copy` is given) the characters of that request from
`copy[0]` to `copy[1]`, then `append`; `length` is the length of the result, checked on reading.
`keep` runs to the first character where the two texts differ. In isolation (b) the thread only
grows, its newest update kept up to the end of what happened (which the previous request holds), so
`keep` runs into that update and `append` is the reply and the next update; in isolation (a) the
shared part is the longest common prefix (the briefing), and the window of recent lines slides: what
it still shows of the previous window is a `copy`. A request that shares less than `MIN_KEEP` characters with its predecessor is written whole.
So the file grows with what is new in each request, not with the whole thread.

`PromptLogWriter` encodes (used by `Recorder.record_prompt`); `read_prompts` rebuilds every request
byte for byte. Every reader of `prompts.jsonl` (the audit, resume, tests) goes through `read_prompts`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from promptdesk.core.errors import PromptdeskError
from promptdesk.core.protocol.bounded import as_text, count_lines, load_json, text_lines, whole_line
from promptdesk.core.providers.base import ChatMessage, Request
from promptdesk.core.providers.json_text import escaped, message_json

FILE = "prompts.jsonl"
MIN_KEEP = 256
"""A delta must reuse at least this many characters of its base, else the request is written whole."""
_LEAD = ("system", "messages")
_ROUTING = frozenset({"to", "purpose", "beat", "thread_kept"})
"""`Request` fields that are not part of a request's text: the line's routing facts, and where its
thread's kept part ends (a hint for placing a cache mark; the next request shows that part)."""


class PromptLogError(PromptdeskError):
    """`prompts.jsonl` cannot be read back (a delta whose base is missing, or a wrong length)."""

    code = "PROMPT_LOG_ERROR"


def request_text(request: Request | dict[str, Any]) -> str:
    """The canonical JSON text of one request: what the log stores and rebuilds byte for byte."""
    data = request.model_dump(exclude_none=True, exclude=_ROUTING) \
        if isinstance(request, Request) else {k: v for k, v in request.items() if k not in _ROUTING}
    ordered = {k: data[k] for k in _LEAD if k in data} | {k: v for k, v in data.items() if k not in _LEAD}
    return json.dumps(ordered, ensure_ascii=False)


def common_prefix(a: str, b: str, i: int = 0, j: int = 0) -> int:
    """The length of the longest common prefix of `a[i:]` and `b[j:]`.

    Compared in C-level slices that double in length, then halve: each character is copied a few
    times at most, whatever the length of the strings (a delta's shared part is tens of kilobytes,
    and its differences are near its end)."""
    limit = min(len(a) - i, len(b) - j)
    lo, step = 0, 64
    while lo < limit:
        hi = min(lo + step, limit)
        if a[i + lo:i + hi] != b[j + lo:j + hi]:
            break
        lo, step = hi, step * 2
    else:
        return max(limit, 0)
    while lo < hi:  # a[i:i + lo] matches; the first difference is before i + hi
        mid = (lo + hi + 1) // 2
        if a[i + lo:i + mid] == b[j + lo:j + mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


@dataclass
class _Sent:
    """The writer's memory of a recipient's previous request."""

    id: int
    text: str
    request: Request
    tail: int
    """Characters after the last message of `text` (`]`, the other fields, `}`)."""


class PromptLogWriter:
    """Turns each request into one line: whole, or a delta against its recipient's previous request.

    When a request's thread extends the previous one's (isolation b), only the new messages are
    serialised; otherwise the whole request is, and the shared prefix is found by comparison.
    """

    def __init__(self) -> None:
        self.next_id = 1
        self._last: dict[str, _Sent] = {}
        self._encoded: dict[str, dict[tuple[str, str], str]] = {}
        """Each recipient's newest messages as JSON (`_message_json`): those its last request added, and
        those `prepare` encoded for its next."""

    def prepare(self, request: Request) -> None:
        """Encode now the messages of `request` that the recipient's last request did not add: how
        its next request begins (`ThreadActor.ahead`, while its beat is still played), so that
        recording that request encodes little more than its update. What is recorded is the same."""
        if request.to in self._last:
            memo = self._encoded.setdefault(request.to, {})
            for message in request.messages[len(self._last[request.to].request.messages) - 1:]:
                _message_json(message, memo)

    def continue_after(self, run_dir: Path) -> None:
        """Go on writing an existing `prompts.jsonl` (a resumed run): ids above every line, torn ones
        included, and each recipient's next request a delta against its last readable one. Never
        refuses a damaged file (the audit names its lines): a recipient whose last request cannot be
        rebuilt exactly has its next one written whole."""
        path = Path(run_dir) / FILE
        with open(path, "rb") as handle:
            self.next_id = count_lines(handle) + 1
        inexact: list[str] = []
        for record in read_prompts(run_dir, on_problem=inexact.append):
            self.next_id = max(self.next_id, record.id + 1)
            try:
                if inexact:
                    raise ValueError(inexact.pop())
                request = Request.model_validate({**record.request, "to": record.to, "purpose": record.purpose,
                                                  "beat": record.beat})
            except ValueError:
                self._last.pop(record.to, None)
                continue
            self._last[record.to] = _Sent(record.id, record.text, request, len(record.text) - _messages_end(record.text, request))

    def line(self, t: float, request: Request) -> str:
        """The line (without its newline) that records one request."""
        record: dict[str, Any] = {"id": self.next_id, "t": round(t, 4), "to": request.to, "purpose": request.purpose}
        if request.beat is not None:
            record["beat"] = request.beat
        previous = self._last.get(request.to)
        memo = self._encoded.get(request.to, {})
        self._encoded[request.to] = used = {}
        text, keep = _extended(previous, request, memo, used) if previous else (None, 0)
        if text is None:
            text = request_text(request)
            keep = common_prefix(previous.text, text) if previous else 0
            tail = len(text) - _messages_end(text, request)
        else:
            tail = previous.tail  # the same frame after the same messages' end
        self._last[request.to] = _Sent(self.next_id, text, request, tail)
        self.next_id += 1
        if previous and keep >= MIN_KEEP:
            keep += common_prefix(previous.text, text, keep, keep)
            copy = _slid(previous.text, text, keep)
            record.update(extends=previous.id, keep=keep)
            if copy:
                record["copy"] = list(copy)
            append = text[keep + (copy[1] - copy[0] if copy else 0):]
            return (json.dumps(record, ensure_ascii=False)[:-1] + ', "append": "' + escaped(append, "\\n") +
                    f'", "length": {len(text)}}}')
        return json.dumps(record, ensure_ascii=False)[:-1] + ', "request": ' + text + "}"


def _slid(base: str, text: str, keep: int) -> tuple[int, int] | None:
    """The longest stretch of `base` after its first `keep` characters that `text` goes on with at
    `keep` (a window of lines that slid: what it still shows of the previous one), if it is worth a
    `copy` (at least `MIN_KEEP` characters)."""
    probe = text[keep:keep + 64]
    best, at, tries = None, base.find(probe, keep) if len(probe) == 64 else -1, 0
    while at != -1 and tries < 8:  # a few candidates: a window's lines rarely repeat 64 characters
        tries += 1
        length = common_prefix(base, text, at, keep)
        if length >= MIN_KEEP and (best is None or length > best[1] - best[0]):
            best = (at, at + length)
        at = base.find(probe, at + 1)
    return best


_FRAME = tuple(name for name in Request.model_fields if name not in {*_ROUTING, "system", "messages"})
"""The fields of a request's text after its messages."""


def _same_frame(a: Request, b: Request) -> bool:
    return all(getattr(a, name) == getattr(b, name) for name in _FRAME)


def _message_json(message: ChatMessage, memo: dict[tuple[str, str], str]) -> str:
    """A message's canonical JSON, from `memo` when it was encoded before."""
    key = (message.role, message.content)
    encoded = memo.get(key)
    if encoded is None:
        encoded = memo[key] = message_json(message.role, message.content)
    return encoded


def _extended(previous: _Sent, request: Request, memo: dict[tuple[str, str], str],
              used: dict[tuple[str, str], str]) -> tuple[str | None, int]:
    """The request's text built from the previous one's when its thread only grew (or grew after a
    new copy of its newest message: an isolation (b) thread keeps the update it answered shorter
    than it was sent), and how much of the previous text it keeps. The messages' JSON comes from
    `memo` when it holds them (`PromptLogWriter.prepare`); `used` is given the last one's (the next
    request's `replaced`)."""
    before, after = previous.request.messages, request.messages
    if len(after) < len(before) or request.system != previous.request.system or not _same_frame(request, previous.request):
        return None, 0
    kept = next((i for i, (a, b) in enumerate(zip(before, after)) if a is not b and a != b), len(before))
    if kept < len(before) - 1:
        return None, 0
    end = keep = len(previous.text) - previous.tail
    if kept < len(before):  # the newest message was replaced: keep what precedes it (and its ", ")
        replaced = _message_json(before[-1], memo)
        keep = end - len(replaced) - (2 if kept else 0)
        if previous.text[end - len(replaced):end] != replaced:
            return None, 0
    added = ", ".join(_message_json(m, memo) for m in after[kept:])
    if len(after) > kept:
        used[(after[-1].role, after[-1].content)] = _message_json(after[-1], memo)
    joint = ", " if kept and added else ""
    return "".join((previous.text[:keep], joint, added, previous.text[end:])), keep


def _messages_end(text: str, request: Request) -> int:
    """Where the messages list of a request's canonical text ends (at its closing `]`)."""
    rest = request_text(request.model_copy(update={"system": "", "messages": []}))
    return len(text) - (len(rest) - len('{"system": "", "messages": ['))


@dataclass
class PromptRecord:
    """One request as it was sent, rebuilt: routing facts and the request itself."""

    id: int
    t: float
    to: str
    purpose: str
    beat: int | None
    text: str
    """The request's canonical JSON text (see `request_text`)."""
    line: int = 0
    """Its line number in `prompts.jsonl`."""
    extends: int | None = None
    """The id of the request this one was recorded against, if it was a delta."""
    keep: int = 0
    """How many leading characters of `text` it shares with that request (its prefix; a `copy` after
    it is not counted: what was copied is read afresh, as the audit reads it)."""

    @property
    def request(self) -> dict[str, Any]:
        return json.loads(self.text)

    def as_dict(self) -> dict[str, Any]:
        """The whole-request shape: `{"id", "t", "to", "purpose", "beat"?, "request"}`."""
        out: dict[str, Any] = {"id": self.id, "t": self.t, "to": self.to, "purpose": self.purpose,
                               "request": self.request}
        if self.beat is not None:
            out["beat"] = self.beat
        return out


def read_prompts(run_dir: Path, *, warn=None, on_problem=None, on_unreadable=None) -> Iterator[PromptRecord]:
    """Every request of a run's `prompts.jsonl`, rebuilt byte for byte, in order.

    A torn or undecodable line (a crash mid-write) is skipped with a warning (`warn(message)`), and
    `on_unreadable(number, line, exc)` is given it as it stands (the audit tells torn from garbled). A
    delta that cannot be rebuilt (its base missing, or a length that does not add up: the file was
    edited) raises `PromptLogError`; with `on_problem(message)` it is reported instead and the
    record is yielded with what could be read of it, standing alone (`extends` None).
    """
    path = Path(run_dir) / FILE
    if not path.exists():
        return
    texts: dict[int, str] = {}
    last_of: dict[str, int] = {}
    unread: set[int] = set()
    with open(path, "rb") as handle:
        for number, line in enumerate(text_lines(handle, LINE_MAX_BYTES, "surrogateescape"), 1):
            if line is not None and not line.strip():
                continue
            try:
                record, problem = _rebuild(load_json(whole_line(line, LINE_MAX_BYTES)), texts, number, unread)
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                unread.add(number)
                if warn:
                    warn(f"{path}: line {number} skipped (unreadable: {exc})")
                if on_unreadable:
                    on_unreadable(number, as_text(line), exc)
                continue
            if problem and on_problem is None:
                raise PromptLogError(problem)
            if problem:
                on_problem(problem)
            stale = last_of.get(record.to)
            if stale is not None:
                texts.pop(stale, None)
            texts[record.id], last_of[record.to] = record.text, record.id
            yield record


_FIELDS: dict[str, tuple[type | tuple[type, ...], str]] = {
    "id": (int, "a whole number"), "t": ((int, float), "a number"), "to": ((str, type(None)), "text"), "purpose": (str, "text"),
    "beat": ((int, type(None)), "a whole number or null"), "request": (dict, "an object"),
    "extends": (int, "a whole number"), "keep": (int, "a whole number"), "append": (str, "text"),
    "length": (int, "a whole number"), "copy": (list, "a pair of whole numbers"),
}
"""Each field a line may hold, with the type it must have: a line of another type is unreadable (named
as such), never half read into a record that breaks its readers."""


def _typed(data: Any) -> dict[str, Any]:
    """`data` when it is a request line of the right types; else TypeError naming the field."""
    if not isinstance(data, dict):
        raise TypeError(f"a line must be a JSON object, not {type(data).__name__}")
    for name, (kinds, what) in _FIELDS.items():
        value = data.get(name)
        if name in data and (not isinstance(value, kinds) or isinstance(value, bool)):
            raise TypeError(f'"{name}" must be {what}, not {json.dumps(value, ensure_ascii=False)[:40]}')
    copy = data.get("copy")
    if copy is not None and (len(copy) != 2 or not all(isinstance(n, int) and not isinstance(n, bool) for n in copy)):
        raise TypeError('"copy" must be a pair of whole numbers')
    return data


REQUEST_MAX_CHARS = 16_000_000
"""The longest request a line may rebuild to (a real one is a few MB): a line copying its base (`keep`,
`copy`) can double it, so thirty short lines would rebuild to a terabyte."""
LINE_MAX_BYTES = 4 * REQUEST_MAX_CHARS
"""The longest line read (a request written whole): a longer one is passed over unread (a log linked to
`/dev/zero`, or gigabytes without a line break, held `audit` and `metrics` past 8 GB)."""


def _rebuild(data: dict[str, Any], texts: dict[int, str], number: int,
             unread: set[int] = frozenset()) -> tuple[PromptRecord, str | None]:
    """One line's request, and what is wrong with it if it cannot be rebuilt exactly (`unread`: the
    lines that could not be read, a request's base among them)."""
    data = _typed(data)
    problem, extends, keep = None, data.get("extends"), data.get("keep", 0)
    if "request" in data:
        text = request_text(data["request"])
    else:
        base = texts.get(extends)
        copy = data.get("copy")
        rebuilt = len((base or "")[:keep]) + (len((base or "")[copy[0]:copy[1]]) if copy else 0) + len(data["append"])
        if rebuilt > REQUEST_MAX_CHARS:  # measured before it is built: each line may double the last (a bomb)
            raise ValueError(f"request {data.get('id')} would rebuild to {rebuilt:,} characters, over the "
                             f"{REQUEST_MAX_CHARS:,} a request may hold (the file was changed)")
        text = (base or "")[:keep] + ((base or "")[copy[0]:copy[1]] if copy else "") + data["append"]
        if base is None:
            problem = (f"{FILE} line {number}: request {data.get('id')} extends request {extends}, "
                       + ("whose line cannot be read" if extends in unread else
                          "which is not the previous request of the same recipient"))
        elif len(text) != data["length"]:
            problem = (f"{FILE} line {number}: request {data.get('id')} rebuilt to {len(text)} characters, "
                       f"expected {data['length']} (the file was changed)")
        if problem:
            extends, keep = None, 0
    record = PromptRecord(id=data.get("id", number), t=data.get("t", 0.0), to=data["to"],
                          purpose=data.get("purpose", "turn"), beat=data.get("beat"), text=text, line=number,
                          extends=extends, keep=keep)
    return record, problem


def read_requests(run_dir: Path) -> list[dict[str, Any]]:
    """Every request in the whole-request shape (small runs and tests; large runs should iterate)."""
    return [record.as_dict() for record in read_prompts(run_dir)]


def requests_since(run_dir: Path, t: float | None, kept: Iterable[Any] = ()) -> list[int]:
    """The ids of the requests of `prompts.jsonl` recorded at or after `t` (none when `t` is None):
    those a resume finds sent for a beat it plays again, or a check it makes again. A request whose
    call the `kept` events record (by recipient, purpose and beat, in order) was answered before the
    cut, whatever its `t`: a clock that stood still (the offline improviser without a simulated
    latency) stamps every request alike. A line that cannot be read is passed over (the audit judges it)."""
    path = Path(run_dir) / FILE
    if t is None or not path.exists():
        return []
    answered = Counter((e.target or "", getattr(e, "purpose", "turn"), e.beat) for e in kept if e.type == "call")
    found: list[int] = []
    with open(path, "rb") as handle:
        for line in text_lines(handle, LINE_MAX_BYTES):
            try:
                record = load_json(line)
                key = (record["to"] or "", record.get("purpose", "turn"), record.get("beat"))
                if answered[key] > 0:
                    answered[key] -= 1
                elif float(record["t"]) >= t:
                    found.append(int(record["id"]))
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
    return found
