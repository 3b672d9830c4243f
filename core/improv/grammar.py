"""A small Tracery-style grammar: rules expand `#symbol#` references into well-formed sentences.

A grammar is a mapping of symbol -> alternatives; an alternative is text with `#symbol#` or
`#symbol.modifier#` references. The symbols a request brings (a scene's noun phrases, a name, a
quoted phrase) are passed as `bindings` at expansion time: an alternative that needs a binding the
request lacks is never chosen, so a line never has an empty slot. Bindings are whole noun phrases or
whole clauses, never bare adjectives. Choice is by the caller's seeded `random.Random` only.

Modifiers: `cap` (first letter upper), `low` (first letter lower, unless a name or `I`), `a` (an
indefinite article before a bare noun phrase).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

_REF = re.compile(r"#([a-z_]+)(?:\.([a-z]+))?#")
Bindings = Mapping[str, Sequence[str]]


@dataclass(frozen=True)
class _Alternative:
    """One parsed alternative: its literal pieces and references, and the symbols it needs."""

    pieces: tuple[str | tuple[str, str], ...]
    needs: frozenset[str]


class Grammar:
    """Rules parsed once; `expand` draws one sentence for a symbol with the given bindings."""

    def __init__(self, rules: Mapping[str, Sequence[str]]) -> None:
        self.rules = {symbol: tuple(_parse(text) for text in alternatives) for symbol, alternatives in rules.items()}
        self._memo: dict[tuple[str, frozenset[str]], tuple[_Alternative, ...]] = {}

    def can_say(self, symbol: str, bindings: Bindings) -> bool:
        """Whether `symbol` has an alternative whose every slot can be filled."""
        return bool(self._alternatives(symbol, _present(bindings)))

    def expand(self, symbol: str, rng: random.Random, bindings: Bindings, share: tuple[int, int] | None = None,
               family: Sequence[str] = (), strict: bool = False) -> str:
        """One expansion of `symbol` ('' when nothing can be said with these bindings).

        With `share` (i, n), the alternative is drawn from the i-th of n shares (`shared_out`) of the
        alternatives of `family` (symbols that say much the same, in one order for every speaker; by
        default `symbol` alone), those of `symbol` itself first when its share holds some. The shares
        are cut from every alternative of the family, whatever the bindings, so that they are the same
        for every speaker: n speakers drawing from their own shares never draw the same alternative
        while the family has n. A share none of whose alternatives these bindings can fill is taken
        from those they can, unless `strict` (then nothing is said: another speaker's share holds them)."""
        present = _present(bindings)
        if share is None:
            return _tidy(self._expand(symbol, rng, bindings, present))
        own = self._alternatives(symbol, present)
        names = family or (symbol,)
        every = [alt for name in names for alt in self.rules.get(name, ())]
        usable = {alt for name in names for alt in self._alternatives(name, present)} | set(own)
        mine = [alt for alt in shared_out(every, share) if alt in usable] or ([] if strict else
                                                                              list(shared_out([alt for alt in every if alt in usable] or list(own), share)))
        if not mine:
            return ""
        return _tidy(self._fill(rng.choice([alt for alt in mine if alt in own] or mine), rng, bindings, present))

    def _alternatives(self, symbol: str, present: frozenset[str]) -> tuple[_Alternative, ...]:
        """The alternatives of `symbol` that can be filled when these bindings are present (memoised:
        it depends only on which bindings are present)."""
        key = (symbol, present)
        if key not in self._memo:
            self._memo[key] = ()
            self._memo[key] = tuple(alt for alt in self.rules.get(symbol, ()) if all(
                (need in present) if need not in self.rules else bool(self._alternatives(need, present))
                for need in alt.needs))
        return self._memo[key]

    def _expand(self, symbol: str, rng: random.Random, bindings: Bindings, present: frozenset[str]) -> str:
        if symbol not in self.rules:
            options = bindings.get(symbol) or ()
            return rng.choice(options) if options else ""
        usable = self._alternatives(symbol, present)
        return self._fill(rng.choice(usable), rng, bindings, present) if usable else ""

    def _fill(self, alternative: _Alternative, rng: random.Random, bindings: Bindings, present: frozenset[str]) -> str:
        out: list[str] = []
        for piece in alternative.pieces:
            if isinstance(piece, str):
                out.append(_agree(out[-1], piece) if out else piece)
            else:
                name, modifier = piece
                out.append(MODIFIERS[modifier](self._expand(name, rng, bindings, present)))
                if len(out) > 1:
                    out[-2] = _agree_before(out[-2], out[-1])
        return "".join(out)


_PLURAL_VERBS = {" was": " were", " is": " are", " has": " have", " doesn't": " don't"}
_PLURALS = frozenset("people children men women police feet teeth".split())
_SINGULAR_S = ("ss", "us", "is", "news", "'s", "ics")


def _agree(subject: str, text: str) -> str:
    """`text`'s opening verb agreeing with the noun phrase just before it (`the spare keys were`)."""
    verb = next((v for v in _PLURAL_VERBS if text.startswith(v + " ") or text == v or text[len(v):len(v) + 1] in ".,?!"
                 and text.startswith(v)), None)
    return _PLURAL_VERBS[verb] + text[len(verb):] if verb is not None and _plural(subject) else text


_VERB_BEFORE = re.compile(r"(?:^|(?<=\s))(Is|is|Was|was|Has|has|Does|does)\s$")
_PLURAL_BEFORE = {"Is": "Are", "is": "are", "Was": "Were", "was": "were", "Has": "Have", "has": "have",
                  "Does": "Do", "does": "do"}


def _agree_before(text: str, subject: str) -> str:
    """`text`'s closing verb agreeing with the noun phrase just after it (`Are the stairs really...`)."""
    verb = _VERB_BEFORE.search(text)
    if verb is None or not _plural(subject):
        return text
    return text[:verb.start(1)] + _PLURAL_BEFORE[verb.group(1)] + " "


def _plural(subject: str) -> bool:
    """Whether a short noun phrase is plural by its last word (`the spare keys`); never a name, a list or
    a long phrase."""
    if not subject or "," in subject or " and " in subject or len(subject.split()) > 5:
        return False
    head = subject.split()[-1].strip(".,;:!?'\"")
    if head[:1].isupper():
        return False  # a name (`Thomas is here`)
    head = head.lower()
    return head in _PLURALS or (len(head) > 3 and head.endswith("s") and not head.endswith(_SINGULAR_S))


def shared_out(alternatives: Sequence[_Alternative], share: tuple[int, int]) -> Sequence[_Alternative]:
    """The `i`-th of `n` shares of `alternatives` (`share` = (i, n)): every n-th from the i-th, so that
    n speakers drawing from their own shares never draw the same one; with fewer alternatives than
    speakers, the one at i modulo their number."""
    index, count = share
    if len(alternatives) < count:
        return alternatives[index % len(alternatives):][:1]
    return alternatives[index % count::count]


def _present(bindings: Bindings) -> frozenset[str]:
    return frozenset(key for key, value in bindings.items() if value)


def _parse(text: str) -> _Alternative:
    pieces: list[str | tuple[str, str]] = []
    at = 0
    for match in _REF.finditer(text):
        if match.start() > at:
            pieces.append(text[at:match.start()])
        pieces.append((match.group(1), match.group(2) or ""))
        at = match.end()
    if at < len(text):
        pieces.append(text[at:])
    return _Alternative(tuple(pieces), frozenset(p[0] for p in pieces if isinstance(p, tuple)))


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _low(text: str) -> str:
    first = text.split(" ", 1)[0]
    if first in ("I", "I'm", "I've", "I'd", "I'll") or (first[:1].isupper() and first[1:2].islower() and first not in _PLAIN):
        return text
    return text[:1].lower() + text[1:]


_PLAIN = frozenset("The A An This That My Your Our Their His Her It We You They There What When How".split())


def _article(text: str) -> str:
    first = text.split(" ", 1)[0].lower()
    if first in ("the", "a", "an", "my", "your", "his", "her", "our", "their", "this", "that") or not text:
        return text
    vowel = first[:1] in "aeiou" and not first.startswith(("uni", "use", "eu", "one"))
    return ("an " if vowel or first.startswith("hour") else "a ") + text


MODIFIERS = {"": lambda s: s, "cap": _cap, "low": _low, "a": _article}


def _tidy(text: str) -> str:
    """One space between words, no space before punctuation, no doubled end marks, a capital first."""
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([,.;:!?])", r"\1", text)
    text = re.sub(r"([.!?])[.]+", r"\1", text)
    text = re.sub(r",([.!?])", r"\1", text)
    return _cap(text)
