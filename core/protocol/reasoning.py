"""A reasoning model's private preamble, taken out of a reply that is not read as tags.

Reasoning models served by a local server without a reasoning parser (DeepSeek-R1, Qwen3 or QwQ
through llama.cpp, vLLM, LM Studio or Ollama) write their chain of thought into the reply itself:
`<think>…</think>` before the answer, or only `…</think>` when the chat template opened the element
in the prompt. The tag protocol already reads all of that as private
(`promptdesk.core.protocol.tags`); the YAML and JSON replies of a roundtable and a collaboration
pass through `without_reasoning` first, fail closed: everything up to the last closing reasoning
tag goes, and a reasoning tag opened and never closed (a reply cut at its token limit) takes the
rest of the reply with it. A JSON turn (`protocol: json`) is read after its preamble
(`split_preamble`): a server that constrains only the answer lets the model think first.
"""

from __future__ import annotations

import re

_NAMES = r"(?:think|thinking|reasoning|thought)"
_CLOSE_RE = re.compile(r"<\s*/\s*" + _NAMES + r"\s*>", re.IGNORECASE)
_OPEN_RE = re.compile(r"<\s*" + _NAMES + r"(?:\s[^<>]{0,500})?>", re.IGNORECASE)


def without_reasoning(text: str) -> str:
    """`text` without a reasoning model's private reasoning (see the module docstring)."""
    last = None
    for last in _CLOSE_RE.finditer(text):
        pass
    if last is not None:
        text = text[last.end():]
    opened = _OPEN_RE.search(text)
    return text[:opened.start()] if opened else text


def split_preamble(text: str) -> tuple[str | None, str]:
    """(the reasoning preamble, the rest) of a reply that does not begin with `{`: everything up to
    its last closing reasoning tag is the preamble (its opening tag left out); (None, `text`) when
    the reply begins with `{` or closes no reasoning tag."""
    if text.lstrip().startswith("{"):
        return None, text
    last = None
    for last in _CLOSE_RE.finditer(text):
        pass
    if last is None:
        return None, text
    head = text[:last.start()].strip()
    opened = _OPEN_RE.match(head)
    return (head[opened.end():] if opened else head).strip(), text[last.end():]
