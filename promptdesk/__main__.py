"""`python -m promptdesk`: the `promptdesk` command, console included."""

from promptdesk.tui.launch import main

raise SystemExit(main())
