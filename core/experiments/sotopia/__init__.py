"""Sotopia (Zhou et al., ICLR 2024; MIT licence) as a scene source: `promptdesk import sotopia EXPORT.json`.

Sotopia publishes its database as one JSON export whose keys are `:sotopia.database.<module>.<Class>:<pk>`:
environments (a scenario and two private social goals), agents (characters with a secret), relationships
and environment-agent combos. `export` reads and checks every record (a malformed one is refused with its
key and why, the rest kept); `relationship` is Sotopia's rule for what each agent is told of the other;
`profiles` turns an agent into a character; `scenes` an environment and its two agents into a scene;
`naming` names them all; `importer` selects, builds, checks and writes them, idempotently, and counts what
it did. The seven dimensions they are scored on are `promptdesk.core.protocol.rubrics.sotopia`.

May import `promptdesk.core.casting` (to check each scene as a scene file is checked),
`promptdesk.core.characters` (the name gate), `promptdesk.core.protocol` and `promptdesk.core.errors`.
"""
