"""A Chat Completions request's body as the OpenAI SDK writes it, built by Promptdesk and handed to
the SDK's `post` whole (`wire_body`), or, for a request sent ahead, as far as its thread goes
(`wire_prefix`), and when it is asked only the rest (`wire_rest`: `promptdesk.core.providers.early`)."""

from __future__ import annotations

import json
from typing import Any

from promptdesk.core.providers.json_text import message_json


def _dumps(value: Any) -> str:
    """JSON as the SDK writes it: no ASCII escaping, no spaces, no NaN."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def wire_body(params: dict[str, Any], stream: bool, known: dict[tuple[str, str], str] | None = None) -> bytes:
    """The request body as the SDK would write it for `params` (`_dumps`), built once here and handed
    to the SDK's `post` whole.

    `create` costs about 0.35 ms more per request than `post` on this machine (its options,
    argument merge and encoding), paid by a crowd's beat once per actor before the last request
    can leave; the body on the wire is the same (`stream` after the messages, as `create` puts it).

    `known` maps a message's role and content to its JSON from the same recipient's last request:
    an isolation (b) thread grows by a few messages a beat, so most of it is not encoded again (at
    50 actors, 0.25 ms a request before). It is refilled with this request's messages only, so it
    holds one thread's worth. The bytes are those of encoding the whole body at once."""
    if known is None:
        messages = [_dumps(message) for message in params["messages"]]
    else:
        previous = known.copy()
        known.clear()
        messages = [_encoded(message, previous, known) for message in params["messages"]]
    rest = {"stream": stream} | {key: value for key, value in params.items() if key not in ("model", "messages", "stream")}
    return (_dumps({"model": params["model"]})[:-1] + ',"messages":[' + ",".join(messages) + "]," +
            _dumps(rest)[1:]).encode()


def wire_prefix(params: dict[str, Any], known: dict[tuple[str, str], str]) -> bytes:
    """How `wire_body` begins for a request whose messages start with `params`' messages: up to the
    comma after the last of them. `known` (encoded messages to reuse) is refilled with those
    messages, which the next request holds (`wire_rest`)."""
    previous = known.copy()
    known.clear()
    messages = [_encoded(message, previous, known) for message in params["messages"]]
    return (_dumps({"model": params["model"]})[:-1] + ',"messages":[' + "".join(m + "," for m in messages)).encode()


def wire_rest(params: dict[str, Any], stream: bool, known: dict[tuple[str, str], str],
              begun: dict[str, Any]) -> bytes | None:
    """What follows `wire_prefix(begun, ...)` in `wire_body(params, stream)`, when `params` goes
    on from `begun` (the same model, its messages first and at least one more); else None. Only the
    messages after `begun`'s are encoded (and added to `known`): at fifty actors, the whole body
    of a long thread is not built again, only its update."""
    messages, first = params["messages"], begun["messages"]
    if params["model"] != begun["model"] or len(messages) <= len(first) or messages[:len(first)] != first:
        return None
    rest = {"stream": stream} | {key: value for key, value in params.items() if key not in ("model", "messages", "stream")}
    return (",".join(_encoded(message, known, known) for message in messages[len(first):]) + "]," +
            _dumps(rest)[1:]).encode()


def _encoded(message: dict[str, Any], memo: dict[tuple[str, str], str], into: dict[tuple[str, str], str]) -> str:
    """A message's JSON, from `memo` when it holds it (a plain role and content), kept in `into`."""
    role, content = message.get("role"), message.get("content")
    if len(message) != 2 or not isinstance(role, str) or not isinstance(content, str) or next(iter(message)) != "role":
        return _dumps(message)
    encoded = memo.get((role, content))
    if encoded is None:
        encoded = message_json(role, content, compact=True)
    into[(role, content)] = encoded
    return encoded
