"""Reading a Sotopia export: one JSON object, each key `:sotopia.database.<module>.<Class>:<pk>`, each value
a record of that class.

The file is read within bounds (its size before it is read, `EXPORT_MAX_BYTES`; nesting, through
`promptdesk.core.protocol.bounded.load_json`). A file that holds no record of a known class is not an
export (`NotAnExport`, exit 2). Every record is then checked on its own: a malformed one (a field of the
wrong type, a text over `MAX_FIELD_CHARS`, two goals expected and three found, a relationship level that
is not one of Sotopia's six, a key or a field given twice) is refused with its key and why (`Refusal`), and the others are kept.
Records of other classes are counted by class and skipped.

The four classes read (fields as Sotopia's `persistent_profile` and `env_agent_combo_storage` declare them):

- `EnvironmentProfile`: `codename`, `source`, `scenario`, `agent_goals` (two), `tag` (later exports; `--env`
  takes it), `relationship` (0-5; absent,
  as in Sotopia's first exports: 0, strangers, Sotopia's default and the level that tells the other nothing);
  its `age_constraint`, `occupation_constraint` and `agent_constraint` only choose agents for combos, and
  are not read.
- `AgentProfile`: `first_name`, `last_name`, `age`, `occupation`, `gender`, `gender_pronoun`,
  `public_info`, `big_five`, `moral_values`, `schwartz_personal_values` (lists, often of stringified
  lists: `["['Liberty'", " ' Care']"]` reads as Liberty, Care), `personality_and_values`,
  `decision_making_style`, `secret`.
- `RelationshipProfile`: `agent_1_id`, `agent_2_id`, `relationship`, `background_story`.
- `EnvAgentComboStorage`: `env_id`, `agent_ids` (two different agents).
- `EnvironmentList`: `name`, `environments` (pks): read for `--env`, which takes its name or pk (Sotopia's hard
  subset is one, `hard_env_set`); a file of lists alone is not an export.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from promptdesk.core.casting.scene_file import TEXT_MAX
from promptdesk.core.characters.importers.model import MAX_FIELD_CHARS, ImportProblem
from promptdesk.core.characters.importers.read import read_bytes
from promptdesk.core.protocol.bounded import Unbounded, load_json, noting_repeats
from promptdesk.core.protocol.lines import inert
from promptdesk.core.protocol.sanitize import mend, strip_controls

EXPORT_MAX_BYTES = 256 * 1_048_576
"""The largest export read (Sotopia's own, 300 environments, is 1.4 MB)."""
ENVIRONMENT, AGENT, RELATIONSHIP, COMBO = "EnvironmentProfile", "AgentProfile", "RelationshipProfile", "EnvAgentComboStorage"
KNOWN = (ENVIRONMENT, AGENT, RELATIONSHIP, COMBO)
LIST = "EnvironmentList"
"""A named list of environments (Sotopia keeps its hard subset as one, `hard_env_set`): read for `--env`, not an
export by itself."""
LEVELS = ("stranger", "know_by_name", "acquaintance", "friend", "romantic_relationship", "family_member")
"""Sotopia's relationship levels, by their number (`RelationshipType`)."""
_KEY = re.compile(r"^:?(?:[A-Za-z_][\w.]*\.)?(?P<cls>[A-Za-z_]\w*):(?P<pk>[^\s:]+)$")
_LISTED = re.compile(r"[\[\]'\"]")
_OPENS = re.compile(rb"\s*\{")
NO_LEVEL = "environments with no relationship level, as strangers"
"""An environment of an early export (before `relationship`), read as Sotopia's model reads it."""
KEY_SHOWN = 120
"""A key longer than this is cut where a refusal names it."""


class NotAnExport(ImportProblem):
    """The file is not a Sotopia export (exit 2, nothing imported)."""


class Malformed(ValueError):
    """One record cannot be read: the message says which field and why."""


@dataclass(frozen=True)
class Environment:
    pk: str
    codename: str
    source: str
    scenario: str
    goals: tuple[str, str]
    relationship: int
    tag: str = ""
    """Sotopia's `tag` (later exports: the work or batch the environment comes from), for `--env`."""


@dataclass(frozen=True)
class Agent:
    pk: str
    first_name: str
    last_name: str
    age: int | None
    occupation: str
    gender: str
    pronoun: str
    public_info: str
    big_five: str
    moral_values: tuple[str, ...]
    schwartz_values: tuple[str, ...]
    personality: str
    decision_style: str
    secret: str

    @property
    def name(self) -> str:
        return " ".join(part for part in (self.first_name, self.last_name) if part)


@dataclass(frozen=True)
class Relationship:
    pk: str
    agents: tuple[str, str]
    level: int
    story: str


@dataclass(frozen=True)
class Combo:
    pk: str
    env: str
    agents: tuple[str, str]


@dataclass(frozen=True)
class EnvironmentList:
    pk: str
    name: str
    environments: tuple[str, ...]


@dataclass(frozen=True)
class Refusal:
    """A record not imported: its key, its class and why."""

    key: str
    kind: str
    why: str

    def line(self) -> str:
        key = self.key if len(self.key) <= KEY_SHOWN else self.key[:KEY_SHOWN] + "…"
        return strip_controls(f"{key}: {self.why}")


@dataclass
class Export:
    """Every record read, by class, and what was refused or skipped."""

    path: Path
    environments: dict[str, Environment] = field(default_factory=dict)
    agents: dict[str, Agent] = field(default_factory=dict)
    relationships: list[Relationship] = field(default_factory=list)
    combos: list[Combo] = field(default_factory=list)
    lists: dict[str, EnvironmentList] = field(default_factory=dict)
    """`EnvironmentList` records by pk (`--env` takes one's name or pk for its environments)."""
    refused: list[Refusal] = field(default_factory=list)
    other: Counter[str] = field(default_factory=Counter)
    """Records of classes this importer does not read, by class."""
    defaulted: Counter[str] = field(default_factory=Counter)
    """Fields an early export lacks, read with Sotopia's own default, by what was read so."""
    refused_pks: set[tuple[str, str]] = field(default_factory=set)
    """(class, pk) of every refused record, so that a combo naming one is told apart from an unknown one."""
    keys: dict[tuple[str, str], str] = field(default_factory=dict)
    """(class, pk) -> the record's key in the export, to name it."""

    def key(self, kind: str, pk: str) -> str:
        return self.keys.get((kind, pk), f"{kind}:{pk}")


def read_export(path: Path) -> Export:
    """Read and check an export (see the module docstring); `NotAnExport` when it is not one."""
    path = Path(path)
    data = _load(path)
    export = Export(path)
    readers = {ENVIRONMENT: _environment, AGENT: _agent, RELATIONSHIP: _relationship, COMBO: _combo, LIST: _list}
    found = 0
    other: Counter[str | None] = Counter()  # skipped records by their raw class, named once per class at the end
    for key, value in data.items():
        match = _KEY.match(key) if isinstance(key, str) else None
        kind = match.group("cls") if match else None
        if kind not in readers:
            other[kind] += 1
            continue
        found += kind in KNOWN
        pk = match.group("pk")
        try:
            if key in getattr(data, "repeated", {}):
                raise Malformed(f"the export gives this key {data.repeated[key]} times (JSON keeps the last "
                                "silently): which record is meant cannot be told")
            record = readers[kind](pk, value)
            if kind == ENVIRONMENT and isinstance(value, dict) and "relationship" not in value:
                export.defaulted[NO_LEVEL] += 1
        except Malformed as exc:
            export.refused.append(Refusal(key, kind, str(exc)))
            export.refused_pks.add((kind, pk))
            continue
        export.keys[(kind, pk)] = key
        _keep(export, kind, record)
    for kind, n in other.items():
        export.other[_class_name(kind)] += n
    if not found:
        classes = [kind for kind in sorted(export.other) if kind != UNRECOGNISED][:5]
        examples = [repr(strip_controls(str(key))[:40]) for key, _ in zip(data, range(3))]
        shown = ", ".join(classes) or (f"keys such as {', '.join(examples)}" if examples else "no keys")
        raise NotAnExport(f"{path}: not a Sotopia export: its keys name no {', '.join(KNOWN)} record (expected keys "
                          f"such as `:sotopia.database.persistent_profile.EnvironmentProfile:<pk>`; found {shown})")
    return export


EXPECTED = ("a Sotopia export is one JSON object whose keys are `:sotopia.database.<module>.<Class>:<pk>` (as "
            "Sotopia's data_gen/redis_json_data.json)")
"""What a file must be, said whenever one is not an export."""



def _load(path: Path) -> dict[str, Any]:
    """The export's top-level object, read within bounds."""
    raw = read_bytes(path, EXPORT_MAX_BYTES, NotAnExport)
    opens = _OPENS.match(raw) is not None  # (JSON Lines, if it is not JSON): read in place, never a copy
    try:
        text = raw.decode("utf-8-sig")
        del raw  # the bytes are not kept while the text is parsed: a large export's peak is the text and its records
        data = load_json(text, object_pairs_hook=noting_repeats)
    except Unbounded as exc:
        raise NotAnExport(f"{path}: {exc}") from None
    except UnicodeDecodeError:
        raise NotAnExport(f"{path}: not UTF-8 JSON; {EXPECTED}") from None
    except ValueError as exc:
        where = f"line {exc.lineno}, column {exc.colno}: {exc.msg}" if hasattr(exc, "lineno") else str(exc)
        lines = getattr(exc, "msg", "") == "Extra data" and getattr(exc, "colno", 0) == 1 and opens
        kind = "JSON Lines (one record per line), not one JSON object" if lines else f"not valid JSON ({where})"
        raise NotAnExport(f"{path}: {kind}; {EXPECTED}") from None
    if not isinstance(data, dict):
        raise NotAnExport(f"{path}: not a Sotopia export: a JSON {json_kind(data)}; {EXPECTED}")
    return data


UNRECOGNISED = "unrecognised keys"


def json_kind(value: Any) -> str:
    """What a JSON value is, in JSON's words (`null`, `array`, `string`...), as a refusal names it."""
    kinds = ((type(None), "null"), (bool, "boolean"), ((int, float), "number"), (str, "string"), (list, "array"),
             (dict, "object"))
    return next((kind for types, kind in kinds if isinstance(value, types)), type(value).__name__)


def _class_name(kind: str | None) -> str:
    """How a skipped record's class is counted (its class, or `unrecognised keys` when the key has none)."""
    return strip_controls(kind)[:60] if kind else UNRECOGNISED


def _keep(export: Export, kind: str, record: Any) -> None:
    if kind == ENVIRONMENT:
        export.environments[record.pk] = record
    elif kind == AGENT:
        export.agents[record.pk] = record
    elif kind == RELATIONSHIP:
        export.relationships.append(record)
    elif kind == LIST:
        export.lists[record.pk] = record
    else:
        export.combos.append(record)


# -- the records ----------------------------------------------------------------------------------


def _object(value: Any, pk: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Malformed(f"the record is a JSON {json_kind(value)}, not an object")
    twice = getattr(value, "repeated", {})
    if twice:
        names = ", ".join(f"`{strip_controls(str(name))[:40]}`" for name in list(twice)[:3])
        raise Malformed(f"the record gives {names} more than once (JSON keeps the last silently): which value is "
                        "meant cannot be told")
    own = value.get("pk")
    if own is not None and str(own) != pk:
        raise Malformed(f"its `pk` ({str(own)[:40]!r}) is not the one its key names ({pk[:40]!r})")
    return value


def text(record: dict[str, Any], key: str, *, required: bool = False) -> str:
    """A text field, stripped of control sequences and `inert` (no line of it passes for an engine line in
    the briefings it reaches: `DIRECTOR NOTE:`, `[EVENT:`, `BEAT 7`); "" when absent (refused when `required`)."""
    value = record.get(key)
    if value is None or (isinstance(value, float) and value != value):
        value = ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise Malformed(f"`{key}` must be text, not a JSON {json_kind(value)}")
    if len(value) > MAX_FIELD_CHARS:
        raise Malformed(f"`{key}` is {len(value):,} characters; the limit is {MAX_FIELD_CHARS:,}")
    value = inert(mend(strip_controls(value)).replace("\r\n", "\n")).strip()
    if not required and value == "nan":
        value = ""  # pandas' empty cell, as Sotopia's exports write it
    if required and not value:
        raise Malformed(f"`{key}` is missing or empty")
    return value


def level(record: dict[str, Any], key: str = "relationship", default: int | None = None) -> int:
    """A relationship level: 0 to 5, or one of `LEVELS` by name; `default` when the field is absent (null
    is no level: refused, as Sotopia's model refuses it)."""
    if key not in record and default is not None:
        return default
    value = record.get(key)
    if isinstance(value, str) and value.strip().lower() in LEVELS:
        return LEVELS.index(value.strip().lower())
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # `3.0`, as a table exported to JSON writes a whole number (Sotopia's model reads it: 3)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < len(LEVELS):
        shown = repr(value)[:40]
        raise Malformed(f"`{key}` must be a relationship level from 0 to 5 ({', '.join(LEVELS)}), not {shown}")
    return value


def _pair(record: dict[str, Any], key: str) -> tuple[str, str]:
    value = record.get(key)
    if not isinstance(value, list) or len(value) != 2 or not all(isinstance(v, str) and v.strip() for v in value):
        count = f"{len(value)} entries" if isinstance(value, list) else f"a JSON {json_kind(value)}"
        raise Malformed(f"`{key}` must list two agents' pks (Sotopia's scenarios are for two), not {count}")
    if value[0] == value[1]:
        raise Malformed(f"`{key}` names the same agent twice")
    return value[0].strip(), value[1].strip()


def _environment(pk: str, value: Any) -> Environment:
    record = _object(value, pk)
    goals = record.get("agent_goals")
    if not isinstance(goals, list) or len(goals) != 2:
        count = f"{len(goals)} goals" if isinstance(goals, list) else f"a JSON {json_kind(goals)}"
        raise Malformed(f"`agent_goals` must hold two goals, one per agent (Sotopia's scenarios are for two), not {count}")
    read = tuple(_scene_text(text({f"agent_goals[{i}]": g}, f"agent_goals[{i}]", required=True), f"agent_goals[{i}]")
                 for i, g in enumerate(goals))
    scenario = _scene_text(text(record, "scenario", required=True), "scenario")
    return Environment(pk, text(record, "codename"), text(record, "source"), scenario, (read[0], read[1]),
                       level(record, default=0),  # Sotopia's default: strangers, who are told nothing of each other
                       text(record, "tag"))


def _scene_text(value: str, key: str) -> str:
    """A text a scene holds whole (the scenario, a goal): refused when longer than a scene's field may be."""
    if len(value) > TEXT_MAX:
        raise Malformed(f"`{key}` is {len(value):,} characters; a scene's text holds at most {TEXT_MAX:,}")
    return value


def _values(record: dict[str, Any], key: str) -> tuple[str, ...]:
    """A list of values, stringified lists (`["['Liberty'", " ' Care']"]`) read as the values they list."""
    value = record.get(key)
    if value is None:
        return ()
    items = value if isinstance(value, list) else [value]
    if not all(isinstance(item, str) for item in items):
        raise Malformed(f"`{key}` must be a list of text")
    joined = text({key: ",".join(items)}, key)
    return tuple(v for v in (_LISTED.sub("", part).strip() for part in joined.split(",")) if v and v.lower() != "nan")


def _agent(pk: str, value: Any) -> Agent:
    record = _object(value, pk)
    age = record.get("age")
    if isinstance(age, str) and age.strip().isdigit():
        age = int(age.strip())
    if isinstance(age, float) and age.is_integer():
        age = int(age)  # `34.0`, as a table exported to JSON writes a whole number
    if age is not None and (isinstance(age, bool) or not isinstance(age, int) or not 0 <= age < 200):
        raise Malformed(f"`age` must be a whole number of years, not {repr(age)[:40]}")
    return Agent(pk, text(record, "first_name", required=True), text(record, "last_name"), age or None,
                 text(record, "occupation"), text(record, "gender"), text(record, "gender_pronoun"),
                 text(record, "public_info"), text(record, "big_five"), _values(record, "moral_values"),
                 _values(record, "schwartz_personal_values"), text(record, "personality_and_values"),
                 text(record, "decision_making_style"), text(record, "secret"))


def _relationship(pk: str, value: Any) -> Relationship:
    record = _object(value, pk)
    pair = (text(record, "agent_1_id", required=True), text(record, "agent_2_id", required=True))
    return Relationship(pk, pair, level(record), text(record, "background_story"))


def _combo(pk: str, value: Any) -> Combo:
    record = _object(value, pk)
    return Combo(pk, text(record, "env_id", required=True), _pair(record, "agent_ids"))


def _list(pk: str, value: Any) -> EnvironmentList:
    record = _object(value, pk)
    environments = record.get("environments")
    if not isinstance(environments, list) or not all(isinstance(e, str) for e in environments):
        raise Malformed(f"`environments` must be a list of environment pks, not a JSON {json_kind(environments)}")
    return EnvironmentList(pk, text(record, "name", required=True), tuple(environments))
