"""Promptdesk's core: everything but the console. It never imports `textual`, `rich` or `tui`.

Rooms, each importing only the rooms below it (checked by `lint-imports`, see `pyproject.toml`):

    cli          the commands: `--batch`, audit, rebuild, resume, import, sweep, metrics, compare, report
    experiments  sweep, metrics, compare (with statistics), report
    casting      a scene file and the operator's choices become a session ready to play; resume
    formats      the formats of play (scene, collaborate, roundtable) and their registry
    engine       the session, beats and turns, actors, briefing, coordinator, journals, the Format interface
    record       events, the recorder, the run folder, transcripts and metadata, prompt log, audit
    improv       the offline improviser (its shared voice; format parts live in their format)
    providers    model backends, provider specs, pricing, rate limits
    characters   loading and search, front matter, journal store, importers
    protocol     the actor protocol: tag reading, speech lines, sanitising
    clock, errors
"""
