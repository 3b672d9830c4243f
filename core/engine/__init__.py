"""The one engine: a `Session` (run loop, `session`) on a `Stage` (event stream, control channel,
state, `stage`), turns (`turn`), after-beat checks and the coordinator (`checks`, `coordinator`),
actors and their briefing (`actors`, `briefing`), journals, pacing, the scene it plays (`scene`)
and the `Format` interface every format implements (`format`).

It names no format: it asks the session's `Format`. May import `core.record`, `core.providers`,
`core.characters`, `core.protocol`, `core.clock`, `core.errors`; never `core.formats`,
`core.casting`, `core.experiments` or `core.cli`.
"""
