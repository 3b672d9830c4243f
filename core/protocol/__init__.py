"""The actor protocol (DESIGN §2): reading `<thinking>`/`<speech>` replies and bracket headers
(`tags`, `reply`), writing speech as one safe line (`lines`), sanitising text (`sanitize`), and what
counts as taking leave (`leave_taking`). Pure functions, no I/O.

The floor of the house: imports nothing else of Promptdesk.
"""
