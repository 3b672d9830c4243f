"""The formats' room: everything the console does differently for the scene, collaborate and roundtable.

This is the one place in `tui` that names a format. Each format's console side is one module
(`scene`, `collaborate`, `roundtable`) holding one `base.ConsoleFormat` subclass: its transcript
lines, what it folds into the session panel and the rows it shows there, how the wizard offers it
and turns a scene file into it, what the cast check lists, its room (`room_commands`, `room_bar`)
and its dialog (`escalation_modal`). `registry` holds one object per format, by the core's name;
the rest of the console looks a format up there and asks it, never tests which one it has.

What the room may import: `promptdesk.tui.lines` and `promptdesk.tui.snapshot` (the vocabulary and the panel's data),
Textual and Rich (for its own widgets), `promptdesk.core.record.events`, and, inside the functions that need
them, the core's scene files and formats (`promptdesk.core.casting.scene_file`, `promptdesk.core.formats.*`), so that a
replay loads no part of the engine. It never imports the screens, widgets, fold or bridge of the
console (they import it), nor `promptdesk.core.providers`.
"""
