"""TinyTroupe's TinyPerson JSON (`*.agent.json`) as a Promptdesk character.

A TinyPerson holds a `persona` (older files: `_persona`, or the fields at the top level): name, age,
nationality, occupation, personality traits and Big Five, goals, beliefs, likes and dislikes, skills,
routines, relationships and more. Each becomes a profile section; the trait sections use the
headings the offline improviser and real models both read (`## Personality`, `## Communication
Style`, `## Behavioral Traits`). Fields this module does not know still become sections, so
nothing in the persona is lost.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from promptdesk.core.characters.importers.model import MAX_FIELD_CHARS, Imported, ImportProblem

_FACTS = ("age", "gender", "nationality", "country_of_residence", "residence", "education")
_KNOWN = {"name", "occupation", "occupation_description", "personality_traits", "professional_interests",
          "personal_interests", "routines", "personality", "style", "long_term_goals", "goals", "beliefs", "preferences",
          "skills", "behaviors", "relationships", "other_facts", "health", "big_five", *_FACTS}


_PERSONA_KEYS = ("persona", "_persona", "_configuration")
"""Where a TinyPerson file keeps its persona (`_configuration` in TinyTroupe 0.3); else at the top level."""
_STATE = {"current_datetime", "current_location", "current_context", "current_attention", "current_goals",
          "current_emotions", "current_memory_context", "currently_accessible_agents"}
"""TinyTroupe 0.3's mental state, kept beside the persona in `_configuration`: never a profile section."""
_RUNTIME = {"type", "json_serializable_class_name", "persona", "_persona", "_configuration", "mental_faculties", "_mental_faculties", "episodic_memory",
            "semantic_memory", "mental_state", "_mental_state", "current_episode_event_count",
            "_current_episode_event_count", "_accessible_environment", "_extended_agent_summary"}
"""What `TinyPerson.save_specification` writes beside the persona (the agent's faculties, memories and
state): never a profile section; reported as dropped when it holds anything."""


_FRAGMENT_KEYS = {"beliefs", "preferences", "behaviors", "skills", "long_term_goals", "relationships",
                  "other_facts", "big_five", "style"}
"""Trait keys a TinyTroupe fragment (`*.fragment.json`) adds to a TinyPerson; none names a person."""


def is_fragment(data: Any) -> bool:
    """Whether parsed JSON is a TinyTroupe fragment: `type: "Fragment"`, or persona traits with no name."""
    if not isinstance(data, dict):
        return False
    if str(data.get("type", "")).lower() == "fragment":
        return True
    persona = data.get("persona") or data.get("_persona") or data
    return (isinstance(persona, dict) and not persona.get("name") and not data.get("name")
            and bool(_FRAGMENT_KEYS & set(persona)) and data.get("type") in (None, "TinyPerson"))


def is_tiny_person(data: Any) -> bool:
    """Whether parsed JSON looks like a TinyPerson specification (or a fragment of one), of any version
    (TinyTroupe 0.3 wrote `json_serializable_class_name` and kept the persona in `_configuration`)."""
    if not isinstance(data, dict):
        return False
    return (is_fragment(data) or "TinyPerson" in (data.get("type"), data.get("json_serializable_class_name"))
            or any(isinstance(data.get(key), dict) for key in _PERSONA_KEYS))


def from_tiny_person(path: Path, data: dict[str, Any]) -> Imported:
    """An `Imported` character from a TinyPerson specification; a fragment is refused as one."""
    if is_fragment(data):
        raise ImportProblem(f"{path}: this is a TinyTroupe fragment (traits to add to a TinyPerson), not a person: "
                            f"it names no one. Import a TinyPerson file (`*.agent.json`) with a `name` instead.")
    persona = next((data[key] for key in _PERSONA_KEYS if data.get(key)), data)
    if not isinstance(persona, dict):
        raise ImportProblem(f"{path}: `persona` must be an object")
    flat = persona is data
    state = {key: value for key, value in persona.items() if key in _STATE}
    persona = {key: value for key, value in persona.items() if key not in _STATE}
    given = persona.get("name") or data.get("name")
    if isinstance(given, (dict, list)):
        raise ImportProblem(f"{path}: the TinyPerson's `name` must be text, not {type(given).__name__} "
                            f"(write the name as one line, e.g. \"name\": \"Ana Silva\")")
    name = _text(given)
    if not name:
        raise ImportProblem(f"{path}: the TinyPerson has no `name`")
    role = _occupation_title(persona.get("occupation"))
    sections = [s for s in (
        ("Background", _bullets(_background(persona))),
        ("Personality", _bullets(_traits(persona) + _rest(persona.get("personality"), "traits", "big_five")
                                 + _items(persona.get("personality_traits")))),
        ("Big Five", _bullets(_pairs(_big_five(persona)))),
        ("Communication Style", _bullets(_items(persona.get("style")))),
        ("Behavioral Traits", _bullets(_items(_get(persona.get("behaviors"), "general"))
                                       + _rest(persona.get("behaviors"), "general", "routines"))),
        ("Routines", _bullets(_pairs(_get(persona.get("behaviors"), "routines")) + _items(persona.get("routines")))),
        ("Goals", _bullets(_items(persona.get("long_term_goals")) + _items(persona.get("goals")))),
        ("Beliefs", _bullets(_items(persona.get("beliefs")))),
        ("Interests", _bullets(_items(_get(persona.get("preferences"), "interests"))
                               + _items(persona.get("professional_interests")) + _items(persona.get("personal_interests")))),
        ("Likes", _bullets(_items(_get(persona.get("preferences"), "likes")))),
        ("Dislikes", _bullets(_items(_get(persona.get("preferences"), "dislikes")))),
        ("Preferences", _bullets(_rest(persona.get("preferences"), "interests", "likes", "dislikes")
                                 if isinstance(persona.get("preferences"), dict) else _items(persona.get("preferences")))),
        ("Skills", _bullets(_items(persona.get("skills")))),
        ("Relationships", _bullets(_relationships(persona.get("relationships")))),
        ("Health", _bullets(_items(persona.get("health")))),
        ("Other Facts", _bullets(_items(persona.get("other_facts")))),
    ) if s[1]]
    sections += [(key.replace("_", " ").title(), body) for key, value in persona.items()
                 if key not in _KNOWN and not (flat and key in _RUNTIME)
                 and (body := _bullets(_items(value) or _pairs(value)))]
    if not sections:
        raise ImportProblem(f"{path}: the TinyPerson's persona has nothing to play from")
    _check_size(path, sections)
    summary = ", ".join(p for p in (_text(persona.get("age")), _text(persona.get("nationality")), role) if p)
    beside = {k: v for k, v in data.items() if k not in _PERSONA_KEYS and (k in _RUNTIME or not flat)}
    dropped = [key for key, value in beside.items() if key not in ("type", "name") and _holds(value)]
    dropped += [key for key, value in state.items() if _holds(value)]
    return Imported(name=name, source="tinytroupe", role=role, description=summary, sections=sections,
                    front={"source": f"tinytroupe from {path.name}"}, dropped=dropped)


def _holds(value: Any) -> bool:
    """Whether a field left out carried anything (an empty list, object or None did not)."""
    if isinstance(value, dict):
        return any(_holds(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds(v) for v in value)
    return value not in (None, "", False)


def _text(value: Any) -> str:
    return "" if value is None or isinstance(value, (dict, list)) else " ".join(str(value).split())


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def _items(value: Any) -> list[str]:
    """A string, a list of strings (or of small objects), or an object (`Key: value` lines) as a list
    of lines: whatever its shape, every value is kept."""
    if isinstance(value, dict):
        return _pairs(value)
    if isinstance(value, list):
        return [line for item in value for line in (_items(item) if isinstance(item, list) else
                                                   [_text(item) or _inline(item)]) if line]
    return [_text(value)] if _text(value) else []


_ITEM_KEYS = ("trait", "interest", "skill", "routine", "goal", "belief")
"""TinyTroupe 0.3 wrapped each list item in an object of one of these keys: the item is its value."""


def _inline(value: Any) -> str:
    """A small object on one line: `key: value; key: value` (a 0.3 `{"trait": ...}` item as its value)."""
    if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in _ITEM_KEYS:
        return _inline(next(iter(value.values())))
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_text(v) or _inline(v)}" for k, v in value.items() if _text(v) or _inline(v))
    if isinstance(value, list):
        return "; ".join(_items(value))
    return _text(value)


def _pairs(value: Any) -> list[str]:
    """An object as `Key: value` lines (lists joined)."""
    if not isinstance(value, dict):
        return []
    return [f"{k.replace('_', ' ').capitalize()}: {_inline(v)}" for k, v in value.items() if _inline(v)]


def _rest(value: Any, *known: str) -> list[str]:
    """An object's keys other than `known` (which a section of their own renders) as `Key: value` lines."""
    return _pairs({k: v for k, v in value.items() if k not in known}) if isinstance(value, dict) else []


def _occupation_title(value: Any) -> str:
    return _text(_get(value, "title")) if isinstance(value, dict) else _text(value)


def _background(persona: dict[str, Any]) -> list[str]:
    lines = [f"{k.replace('_', ' ').capitalize()}: {_text(persona[k])}" for k in _FACTS if _text(persona.get(k))]
    job = persona.get("occupation")
    if isinstance(job, dict):
        where = _text(job.get("organization"))
        line = _occupation_title(job) + (f" at {where}" if where else "")
        lines.append(f"Occupation: {line}" + (f". {_text(job.get('description'))}" if job.get("description") else ""))
        lines += _rest(job, "title", "organization", "description")
    if _text(persona.get("occupation_description")):
        lines.append(f"Occupation description: {_text(persona['occupation_description'])}")
    elif _text(job):
        lines.append(f"Occupation: {_text(job)}")
    return lines


def _traits(persona: dict[str, Any]) -> list[str]:
    personality = persona.get("personality")
    return _items(personality.get("traits")) if isinstance(personality, dict) else _items(personality)


def _big_five(persona: dict[str, Any]) -> Any:
    return _get(persona.get("personality"), "big_five") or persona.get("big_five")


def _relationships(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [f"{k}: {_inline(v)}" for k, v in value.items()]
    out = []
    for item in value if isinstance(value, list) else []:
        if isinstance(item, dict) and item.get("name"):
            rest = _inline({k: v for k, v in item.items() if k not in ("name", "description")})
            line = f"{_text(item['name'])}: {_inline(item.get('description'))}".rstrip(": ")
            out.append(line + (f" ({rest})" if rest else ""))
        elif _inline(item):
            out.append(_inline(item))
    return out


def _bullets(lines: list[str]) -> str:
    return "\n".join(f"- {line}" for line in lines if line)


def _check_size(path: Path, sections: list[tuple[str, str]]) -> None:
    total = sum(len(body) for _, body in sections)
    if total > MAX_FIELD_CHARS * 4:
        raise ImportProblem(f"{path}: the persona is {total:,} characters; the limit is {MAX_FIELD_CHARS * 4:,}")
