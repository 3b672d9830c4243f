"""What a finished run returns: where it was written and how it ended."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class SessionResult:
    """What a finished run returns: where it was written and how it ended."""

    run_dir: Path
    close_reason: str
    goal_achieved: bool | None
    beats: int
    errors: int
    error: str | None = None
    """Why the run could not be recorded to its end (`close_reason` is then `record-error`)."""
    salvaged: int = 0
    """Replies that did not keep the protocol and were salvaged (silence, a fallback): not failures."""

    @property
    def counts(self) -> str:
        """"N actor failures, M salvaged replies": the summary's words, the same for every format."""
        return f"{self.errors} actor failures, {self.salvaged} salvaged replies"
