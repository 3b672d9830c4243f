"""The console's widgets, one per module. None of them knows about a session, only about events.

A widget may import other widgets, the vocabulary (`promptdesk.tui.lines`, `promptdesk.tui.snapshot`, `promptdesk.tui.wrap`,
`promptdesk.tui.choices`), what turns events into text and state (`promptdesk.tui.render`, `promptdesk.tui.stage_state`), the formats'
console sides (`promptdesk.tui.formats`) and the core's readers; never a screen, the bridge or the app.
"""
