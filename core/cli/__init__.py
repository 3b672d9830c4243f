"""The commands: the entry point and parser (`main`), `--batch` (`batch`), and one small module per
command (audit, rebuild, resume, branch, importing, sweep, take_sweep, metrics, compare, report), sharing `common`.

The top of the core: may import any room of it; never `tui` (the console hands itself in through
`common.Console`, from `promptdesk.tui.launch`).
"""
