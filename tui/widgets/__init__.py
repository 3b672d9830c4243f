"""The console's widgets, one per module. None of them knows about a session, only about events.

A widget may import other widgets, the vocabulary (`tui.lines`, `tui.snapshot`, `tui.wrap`,
`tui.choices`), what turns events into text and state (`tui.render`, `tui.stage_state`), the formats'
console sides (`tui.formats`) and the core's readers; never a screen, the bridge or the app.
"""
