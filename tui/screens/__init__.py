"""The console's screens: each one owns its behaviour (wizard, stage, replay, compare) and its keys.

A screen may import every room of the console below it (`bridge`, `widgets`, `render`,
`stage_state`, `playback`, `summary`, `formats` and the vocabulary) and the core; it never imports
`promptdesk.tui.app` (the app opens screens, not the other way round). A screen opens another one with an
import inside the action that opens it.
"""
