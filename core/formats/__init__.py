"""The formats of play, one package each: `scene/`, `collaborate/`, `roundtable/`, and their `registry`.

A format package holds everything that is its own: its scene-file section, how its cast is read,
its briefing, its turn policy, its prompts, parsing and state, its record lines and its part of the
offline improviser, behind one `promptdesk.core.engine.format.Format` subclass. A format imports the engine,
the record, providers, characters, protocol and improv; never another format, `promptdesk.core.casting`,
`promptdesk.core.experiments` or `promptdesk.core.cli`. Only `registry` knows them all.
"""
