"""Casting: a scene file and the operator's two choices become a `Session` ready to play.

The two choices and their trade-offs (`choices`), reading the scene file with its format's section (`scene_file`), the providers of a run (`pool`),
`notes.md` (`notes`), `private.json`'s start record (`start_record`), who evaluates a run
(`evaluators`), building the session
(`build`), rebuilding a killed one from its folder (`resume`) and a take of a run from one of its
beats (`branch`). May import the formats and every
room below; never `promptdesk.core.experiments` or `promptdesk.core.cli`.
"""
