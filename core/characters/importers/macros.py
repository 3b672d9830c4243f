"""A card's macros (its "curly-braced syntaxes"), as Character Card V3 and SillyTavern define them.

- `{{char}}`, `<char>` and `<bot>` are the character: its `nickname` when the card has one (CCv3),
  else its `name`; `{{user}}` and `<user>` are the other role of the card's story (`--user`). All are
  matched in any case and with spaces inside the braces, as the spec asks.
- `{{// ...}}`, `{{hidden_key: ...}}` and `{{comment: ...}}` are the card maker's own notes: CCv3 says
  none is ever sent as a prompt, so none is written. Failing closed, one that is never closed with
  `}}` takes the rest of its field with it.
- Any other macro (`{{random:...}}`, `{{roll:...}}`, `{{pick:...}}`, SillyTavern's `{{time}}`...) is
  left as written and named (`CardText.notices`), since Promptdesk does not expand it.

Every pass is a forward scan (`str.find` or a pattern that cannot cross a brace), linear in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_CHAR = re.compile(r"\{\{\s*char\s*\}\}|<(?:bot|char)>", re.IGNORECASE)
_USER = re.compile(r"\{\{\s*user\s*\}\}|<user>", re.IGNORECASE)
_PRIVATE = re.compile(r"\s*(?://|hidden_key\s*:|comment\s*:)", re.IGNORECASE)
_OTHER = re.compile(r"\{\{\s*([^{}\s:]{1,40})([^{}]*)\}\}")


def without_private(text: str) -> str:
    """The text without its maker's notes (`{{// ...}}`, `{{hidden_key:...}}`, `{{comment:...}}`); a
    note never closed runs to the end of the text."""
    kept: list[str] = []
    at = 0
    while (start := text.find("{{", at)) >= 0:
        if not _PRIVATE.match(text, start + 2):
            kept.append(text[at:start + 2])
            at = start + 2
            continue
        kept.append(text[at:start])
        end = text.find("}}", start + 2)
        at = len(text) if end < 0 else end + 2
    kept.append(text[at:])
    return "".join(kept)


@dataclass
class CardText:
    """Fills one card's fields: who `{{char}}` and `{{user}}` are, and what was seen along the way."""

    char: str
    user: str
    user_seen: bool = False
    unexpanded: dict[str, list[str]] = field(default_factory=dict)
    """Each macro left as written (`{{random:…}}`) -> the fields it was found in."""

    def fill(self, field_name: str, text: str) -> str:
        """The field's text with its macros resolved; what was left as written is remembered."""
        text = without_private(text)
        if _USER.search(text):
            self.user_seen = True
        text = _USER.sub(lambda _m: self.user, _CHAR.sub(lambda _m: self.char, text))
        for match in _OTHER.finditer(text):
            shown = "{{" + match.group(1) + (":…" if match.group(2).strip() else "") + "}}"
            fields = self.unexpanded.setdefault(shown, [])
            if field_name not in fields:
                fields.append(field_name)
        return text

    def notices(self) -> list[str]:
        """The macros left as written, each with the fields holding it (nothing when there were none)."""
        if not self.unexpanded:
            return []
        listed = "; ".join(f"{macro} in {', '.join(fields)}" for macro, fields in self.unexpanded.items())
        return [f"left as written (Promptdesk does not expand these macros): {listed}"]
