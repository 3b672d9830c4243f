"""The director's console: a Textual app that renders a session's event stream and sends its controls.

`promptdesk.tui.launch` is the `promptdesk` command; `promptdesk.tui.app.run_console` opens the console and
`promptdesk.tui.app.create_app` builds the same app for tests. Nothing here calls a provider: `promptdesk.tui.bridge` is
the one module that touches a running session.

Its rooms, each importing only rooms below it (and the core, never `promptdesk.core.providers`): `launch`;
`app` and `scripted`; `screens`; `bridge` and `widgets`; `render`, `stage_state`, `playback` and
`summary`; `formats` (the only room that names a format); and the vocabulary: `lines`, `snapshot`,
`wrap`, `choices`, `themes`, `commands`, `failures` and `dialog` (the dialogs' backdrop), which import no
other room.
"""
