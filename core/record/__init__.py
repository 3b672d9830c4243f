"""The record of a run (DESIGN §6): events (`events`), the recorder and its derived files
(`recorder`, `outputs`, `lines`), the run folder (`run_folder`) and its one writer's lock
(`folder_lock`), the prompt log (`prompt_log`), `private.json` (`private`), the audit (`audit`),
rebuilding (`rebuild`), resume seams (`seams`), a take's record inherited from its parent (`takes`)
and the evaluations gathered into `evaluation.json` (`evaluation_file`).

A run can be read from its folder alone. May import `promptdesk.core.providers` (the request type),
`promptdesk.core.protocol`, `promptdesk.core.errors`; never the engine, a format, casting or the commands.
"""
