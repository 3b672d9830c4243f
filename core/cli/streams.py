"""Standard streams a script may have closed (`promptdesk metrics RUN >&-`, `2>&-`).

Python starts with `sys.stdout` (or `sys.stderr`) set to None when its descriptor is closed, and a
`print` to None does nothing at all: a command's data was dropped and it exited 0, and with stderr
closed every message (`print(..., file=sys.stderr)` with `sys.stderr` None) went to stdout, into the
JSON or CSV a script was parsing. `stand_in_for_closed` puts a stand-in in each place: a closed
stdout fails the first write (the command then says so on stderr, exit 1: what was asked for was not
delivered), a closed stderr takes the messages nowhere.
"""

from __future__ import annotations

import errno
import io
import os
import sys

CLOSED = "the standard output is closed"


class ClosedOutput(io.TextIOBase):
    """Stands for a closed stdout: every write fails (EBADF), and so does the final flush once a
    write was tried (argparse passes over a failed write of a help text)."""

    def __init__(self) -> None:
        super().__init__()
        self.tried = False

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.tried = True
        raise OSError(errno.EBADF, CLOSED)

    def flush(self) -> None:
        if self.tried:
            raise OSError(errno.EBADF, CLOSED)


def stand_in_for_closed() -> None:
    """Replace a closed stdout or stderr (None) with its stand-in."""
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    if sys.stdout is None:
        sys.stdout = ClosedOutput()
