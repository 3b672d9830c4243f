"""The actor protocol (DESIGN §2): reading `<thinking>`/`<speech>` replies and bracket headers
(`tags`, `reply`), writing speech as one safe line (`lines`), sanitising text (`sanitize`), what
counts as taking leave (`leave_taking`), what an evaluator scores and is sent (`rubrics`,
`evaluation`), and reading untrusted YAML and JSON within bounds
(`bounded`: no alias bombs, no nesting that blows the stack). Pure functions, no I/O.

The floor of the house: imports nothing else of Promptdesk.
"""
