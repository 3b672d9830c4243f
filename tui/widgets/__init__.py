"""The console's widgets, one per module. None of them knows about a session, only about events."""
