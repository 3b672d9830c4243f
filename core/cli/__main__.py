"""`python -m core.cli`: the same entry point as the `promptdesk` command."""

from core.cli.main import main

raise SystemExit(main())
