"""`python -m promptdesk.core.cli`: the same entry point as the `promptdesk` command."""

from promptdesk.core.cli.main import main

raise SystemExit(main())
