"""The director's console: a Textual app that renders a session's event stream and sends its controls.

`tui.app.run_console` is what `promptdesk` calls; `tui.app.create_app` builds the same app for tests.
Nothing here calls a provider: `tui.bridge` is the one module that touches a running session.
"""
