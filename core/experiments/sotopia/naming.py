"""Names for what an import writes: each character's slug from its name, each scene's from its
environment's codename and its two agents' first names (`music-competition-ava-ben`).

A name two records would share (two agents with one name, two environments with one codename, one pair
in one environment twice) gets the end of its record's pk (`music-competition-ava-ben-9vwwsr`). Names are
made from the whole export, whatever is selected, so an environment imported alone is named as it is in a
whole import, and a second import of the same export writes the same files.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from promptdesk.core.casting.reserved import RESERVED
from promptdesk.core.characters.importers.model import slugify
from promptdesk.core.characters.loading import SLUG_MAX

TAIL = 6
"""Characters of a pk that tell two records with one name apart."""
CODENAME_MAX = 32
FIRST_NAME_MAX = 14


def tail(pk: str) -> str:
    return slugify(pk)[-TAIL:] or "x"


def unique(bases: dict[str, str], pks: dict[str, str] | None = None) -> dict[str, str]:
    """Each key's name: its base, or, for a base two keys share, the base and the end of its pk (`pks`,
    by key; the key itself when it is the pk)."""
    counts = Counter(bases.values())
    pks = pks or {}
    names = {key: base if counts[base] == 1 else f"{base[:SLUG_MAX - TAIL - 1].rstrip('-')}-{tail(pks.get(key, key))}"
             for key, base in bases.items()}
    taken: Counter[str] = Counter()
    for key, name in names.items():  # two pks with one tail: numbered, in the export's order
        taken[name] += 1
        if taken[name] > 1:
            names[key] = f"{name[:SLUG_MAX - 4].rstrip('-')}-{taken[name]}"
    return names


def character_slugs(agents: dict[str, str]) -> dict[str, str]:
    """agent pk -> slug, from agent pk -> display name; a name the engine keeps for itself (`evaluator`,
    `coordinator`...: `promptdesk.core.casting.reserved`) gets the end of its pk (`evaluator-9vwwsr`)."""
    slugs = unique({pk: slugify(name) or f"sotopia-{tail(pk)}" for pk, name in agents.items()})
    return {pk: f"{slug}-{tail(pk)}" if slug in RESERVED else slug for pk, slug in slugs.items()}


def codename_slug(codename: str, pk: str) -> str:
    return slugify(codename)[:CODENAME_MAX].rstrip("-") or f"environment-{tail(pk)}"


def scene_names(items: Iterable[tuple[str, str, str, str, str]]) -> dict[str, str]:
    """key -> scene name, from (key, its record's pk, codename slug, first agent's first name, second's); a
    first name of "" names an environment alone (`--per environment`)."""
    bases, pks = {}, {}
    for key, pk, codename, first, second in items:
        people = [slugify(n)[:FIRST_NAME_MAX].rstrip("-") for n in (first, second) if n]
        bases[key], pks[key] = "-".join([codename, *[p for p in people if p]])[:SLUG_MAX].rstrip("-"), pk
    return unique(bases, pks)
