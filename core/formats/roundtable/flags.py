"""The roundtable's command-line flag: `--on-escalate accept|continue|conclude` (batch only; the
console asks the operator). Without it, an escalation in `--batch` concludes and says so."""

from __future__ import annotations

import argparse

HEADLESS_CHOICES = ("accept", "continue", "conclude")
"""What `--on-escalate` may answer an escalation with, headless."""


def add_flags(parser: argparse.ArgumentParser) -> None:
    """Add `--on-escalate` to the command line."""
    parser.add_argument("--on-escalate", dest="on_escalate", choices=HEADLESS_CHOICES,
                        help="roundtable, --batch: what an escalation does (accept the facilitator's "
                             "recommendation, continue the discussion, or conclude); without it an escalation concludes")
