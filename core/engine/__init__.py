"""The one engine: a `Session` (run loop, `session`) on a `Stage` (event stream, control channel,
state, `stage`), turns (`turn`), after-beat checks and the coordinator (`checks`, `record_tally`, `coordinator`),
actors and their briefing (`actors`, `briefing`), journals, the evaluation step after the close
(`evaluation`), pacing, the scene it plays (`scene`)
and the `Format` interface every format implements (`format`).

It names no format: it asks the session's `Format`. May import `promptdesk.core.record`, `promptdesk.core.providers`,
`promptdesk.core.characters`, `promptdesk.core.protocol`, `promptdesk.core.clock`, `promptdesk.core.errors`; never `promptdesk.core.formats`,
`promptdesk.core.casting`, `promptdesk.core.experiments` or `promptdesk.core.cli`.
"""
