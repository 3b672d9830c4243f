"""Where the claude-code provider keeps its private files, and how its CLI processes die with it.

Every provider instance works in its own folder, `<tmp>/promptdesk-claude-code-<uid>/<pid>-<random>/`
(the parent 0700 and owned by the user, or the instance falls back to a folder of its own), holding
the temporary HOME (the CLI's session transcripts), the CLI's working folder and the briefing files.
A process killed with SIGKILL cannot remove its folder, so every new instance (the next run, the
`resume` of the killed one) first removes the folders of processes that no longer exist (`sweep`).

The CLI is started through a small launcher (`launcher`) that asks the kernel to kill it when its
parent dies (`prctl(PR_SET_PDEATHSIG, SIGKILL)`, Linux), checks that the parent is still there, then
becomes the real CLI (`execv`): a killed Promptdesk leaves no CLI process behind. Elsewhere the launcher
only starts the CLI.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

PREFIX = "promptdesk-claude-code"
PDEATHSIG = 1
"""`PR_SET_PDEATHSIG` (linux/prctl.h)."""

LAUNCHER = """\
import ctypes, os, signal, sys
parent = int(os.environ.get("PROMPTDESK_PARENT_PID") or 0)
try:
    if ctypes.CDLL(None, use_errno=True).prctl({pdeathsig}, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl")
except (OSError, AttributeError):
    pass
if parent and os.getppid() != parent:
    sys.exit(1)
os.execv({cli!r}, [{cli!r}, *sys.argv[1:]])
"""


def root() -> Path | None:
    """The user's own parent folder (0700, not a link, owned by the user), created when missing; None
    when it cannot be trusted or made (the instance then works in a folder of its own, unswept)."""
    path = Path(tempfile.gettempdir()) / f"{PREFIX}-{os.getuid()}"
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        info = path.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o077:
        return None
    return path


def alive(pid: int) -> bool:
    """Whether a process with this id exists (one of another user's counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep(parent: Path) -> list[Path]:
    """Remove the folders a killed process left in `parent` (its pid gone); returns those removed."""
    removed = []
    for folder in parent.iterdir():
        pid = folder.name.split("-", 1)[0]
        if folder.is_dir() and not folder.is_symlink() and pid.isdigit() and int(pid) != os.getpid() \
                and not alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def instance_folder() -> Path:
    """A new private folder for one provider instance, named for this process (after a sweep)."""
    parent = root()
    if parent is None:
        return Path(tempfile.mkdtemp(prefix=f"{PREFIX}-"))
    sweep(parent)
    return Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=parent))


def bundled_cli() -> str | None:
    """The CLI the SDK would start: its bundled one, else `claude` on the PATH; None when neither."""
    try:
        import claude_agent_sdk
    except ImportError:
        return None
    bundled = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    return str(bundled) if bundled.is_file() else shutil.which("claude")


def launcher(folder: Path, cli: str | None) -> str | None:
    """A launcher script in `folder` that starts `cli` bound to this process's life (see the module's
    docstring); None when there is no CLI to start (the SDK then says so as it would)."""
    if cli is None:
        return None
    script = folder / "claude-launcher"
    body = LAUNCHER.format(pdeathsig=PDEATHSIG, cli=str(cli)) if sys.platform.startswith("linux") else \
        f"import os, sys\nos.execv({str(cli)!r}, [{str(cli)!r}, *sys.argv[1:]])\n"
    script.write_text(f"#!{sys.executable} -IS\n{body}", encoding="utf-8")
    script.chmod(0o700)
    return str(script)
