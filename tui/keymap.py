"""`PROMPTDESK_KEYMAP`: the operator's own keys, by binding id, checked before the console opens.

The variable holds `id=key` pairs separated by `;` (`stage.stop=x;stage.inject=i`); a key may list
several keys separated by `,`, as Textual's bindings do (`stage.stop=x,ctrl+s`). Every binding id is
one the console defines (the keys help shows each); a mistyped id, a pair without `=` or a key, or a
key holding a space or a control character is refused with a message naming it, before the console
opens: a remapping that silently did nothing would leave the operator pressing a key that stops
nothing.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
import re

VARIABLE = "PROMPTDESK_KEYMAP"
_KEY = re.compile(r"[^\s\x00-\x1f\x7f,]+")
"""One key as Textual names it (`x`, `ctrl+s`, `full_stop`, `f5`): no space, control character or comma."""


def keymap_from(text: str) -> dict[str, str]:
    """`"stage.stop=x;stage.inject=i"` → `{"stage.stop": "x", "stage.inject": "i"}` (bad pairs skipped;
    `keymap_problems` names them)."""
    pairs = (item.split("=", 1) for item in text.split(";") if "=" in item)
    return {key.strip(): value.strip() for key, value in pairs if key.strip() and value.strip()}


def binding_ids() -> set[str]:
    """Every binding id the console defines: its screens' and widgets' and the app's own."""
    from textual.dom import DOMNode

    import promptdesk.tui as tui

    for module in pkgutil.walk_packages(tui.__path__, tui.__name__ + "."):
        importlib.import_module(module.name)
    ids: set[str] = set()
    classes = [DOMNode]
    while classes:
        cls = classes.pop()
        classes.extend(cls.__subclasses__())
        if cls.__module__.startswith(tui.__name__):
            ids.update(b.id for b in getattr(cls, "BINDINGS", ()) if getattr(b, "id", None))
    return ids


def keymap_problems(text: str, known: set[str] | None = None) -> list[str]:
    """What is wrong with a `PROMPTDESK_KEYMAP` value, one line per item (none: it may be used)."""
    known = (binding_ids() if text.strip() else set()) if known is None else known
    problems = []
    for item in (part.strip() for part in text.split(";")):
        if not item:
            continue
        name, sep, keys = (part.strip() for part in item.partition("="))
        if not sep or not name:
            problems.append(f"{item!r} is not id=key")
        elif name not in known:
            near = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
            problems.append(f"{name!r} is no binding id" + (f" (did you mean {near[0]}?)" if near else ""))
        elif not keys or not all(_KEY.fullmatch(key.strip()) for key in keys.split(",")):
            problems.append(f"{name}={keys!r}: give keys as Textual names them, separated by commas "
                            "(x, ctrl+s, full_stop, comma), without spaces or control characters")
    return problems


def refusal(text: str) -> str | None:
    """The whole refusal for a `PROMPTDESK_KEYMAP` value that cannot be used, or None."""
    known = binding_ids() if text.strip() else set()
    problems = keymap_problems(text, known)
    if not problems:
        return None
    return (f"INVALID_CONFIG: {VARIABLE}: " + "; ".join(problems) + f". Write id=key pairs separated by ';', e.g. "
            f"stage.stop=x;stage.inject=i. The binding ids: {', '.join(sorted(known))}")
