"""What the commands share: one way to build a command's parser (its help ending with its exit codes),
one way to refuse bad input, one way to end a sweep, and the console as the core may ask for it."""

from __future__ import annotations

import argparse
import errno
import json
import sys
from pathlib import Path
from collections.abc import Callable
from typing import Any, Protocol

from promptdesk.core.errors import EXIT_CLOSED, EXIT_FAILED, EXIT_INVALID


class Console(Protocol):
    """The console, as a command may use it without importing it (given by `promptdesk.tui.launch`)."""

    def open(self, ns: argparse.Namespace, scene: Path | None = None, replay: Path | None = None) -> int: ...

    def compare(self, folders: list[Path], by: str) -> int: ...


def exit_codes(closed: str, failed: str | None, invalid: str = "invalid input: the message names what to fix") -> str:
    """The sentence every help text ends with: what exit codes 0, 1 and 2 mean for this command."""
    middle = f"; 1 {failed}" if failed else ""
    return f"Exit codes: 0 {closed}{middle}; 2 {invalid}."


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose refusal of a flag it does not take names the closest ones it does
    (`--bach`: did you mean --batch?), as a mistyped command or scene name is answered."""

    def error(self, message: str):  # noqa: ANN201 - argparse's: never returns
        if message.startswith("unrecognized arguments: "):
            import difflib

            known = [o for a in self._actions for o in a.option_strings if o.startswith("--")]
            short = [o for a in self._actions for o in a.option_strings if not o.startswith("--")]
            near: list[str] = []
            for word in message.removeprefix("unrecognized arguments: ").split():
                if word.startswith("--"):
                    near += [m for m in difflib.get_close_matches(word.split("=", 1)[0], known, n=2, cutoff=0.7)
                             if m not in near]
                elif word.startswith("-") and len(word) > 1:  # `-v` for -V, `-version` for --version
                    same = [o for o in short if o.lower() == word.lower()]
                    longer = difflib.get_close_matches("-" + word.split("=", 1)[0], known, n=1, cutoff=0.85)
                    near += [m for m in [*same, *longer] if m not in near]
            if near:
                message += f" (did you mean {' or '.join(near)}?)"
        super().error(message)

    def _print_message(self, message: str, file=None) -> None:  # noqa: ANN001 - argparse's
        """argparse's, except that output lost to a full disk or a failing device (`--help > /dev/full`)
        is not passed over as printed: it reaches `main`, which says so (exit 1). A reader gone away
        (`| head -1`) stays quiet, and with stdout closed the help goes to stderr, as argparse does (where
        nothing could be told of a loss)."""
        if not message:
            return
        try:
            stream = file or sys.stderr
            stream.write(message)
            stream.flush()
        except (AttributeError, OSError) as exc:
            if (isinstance(exc, OSError) and stream is not sys.stderr
                    and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)):
                raise


def command_parser(prog: str, description: str, codes: str, epilog: str = "") -> argparse.ArgumentParser:
    """A command's parser: its description, then its options, then `epilog` and its exit codes (kept
    as written, one paragraph each)."""
    return Parser(prog=prog, description=description,
                  epilog="\n\n".join(part for part in (epilog, codes) if part),
                  formatter_class=argparse.RawDescriptionHelpFormatter)


NO_CONSOLE = ("INVALID_CONFIG: the console is not part of this command; run `promptdesk` (with the same "
              "arguments) to open it")
HEADLESS_RUN = "for a headless run use --batch: promptdesk --batch SCENE --isolation a|b --coordinator A|B|C"


def no_terminal(instead: str = HEADLESS_RUN) -> str:
    """The refusal when the console has no terminal: which of stdin and stdout is not one, and `instead`,
    what to do without the console."""
    missing = [name for name, stream in (("stdin", sys.stdin), ("stdout", sys.stdout)) if not _isatty(stream)]
    which = " and ".join(missing) or "stdin and stdout"
    return f"INVALID_CONFIG: the console needs a terminal ({which} {'is' if len(missing) == 1 else 'are'} not one here); {instead}"


def in_background(instead: str = HEADLESS_RUN) -> str | None:
    """The refusal when the console's terminal is someone else's foreground: started with `&`, or under
    `timeout` (which runs it in a process group of its own), the console is stopped by the terminal the
    moment it sets it up, and sat there, blank, until it was killed. None in the foreground."""
    import os

    try:
        foreground = os.tcgetpgrp(sys.stdin.fileno())
    except (AttributeError, ValueError, OSError):  # not this process's controlling terminal: nothing to tell
        return None
    if foreground == os.getpgrp():
        return None
    return ("INVALID_CONFIG: the console is not in the terminal's foreground (started with `&`, or under `timeout` "
            f"without --foreground), where it would wait, stopped, for the terminal: run it in the foreground "
            f"(timeout --foreground SECONDS promptdesk ...); {instead}")


def cannot_draw(instead: str = HEADLESS_RUN) -> str | None:
    """The refusal when the console cannot draw on the terminal: stderr, where it draws, closed or sent
    elsewhere, a `TERM=dumb` terminal, or one that does not take UTF-8 (a Latin-1 or ASCII locale, with Python's UTF-8 mode
    off), where its frames, bars and marks would reach the screen as escapes (`\\u2594` for every cell),
    the layout torn. None when it can draw."""
    import codecs
    import os

    stderr = sys.__stderr__  # where Textual draws
    if not _isatty(stderr):  # `2> errors.log`: the console was drawn into the file, the terminal left blank
        where = "closed" if stderr is None else "not a terminal here (sent elsewhere with 2>)"
        return (f"INVALID_CONFIG: the console draws on stderr, which is {where}: leave stderr on the terminal "
                f"(what goes wrong is also in the run folder's debug.log); {instead}")
    if os.environ.get("TERM") == "dumb":  # Emacs's shell, a compile buffer: every cursor move shown as text
        return ("INVALID_CONFIG: the console needs a terminal that moves its cursor, and TERM=dumb says this one "
                "cannot: run it in a terminal emulator (or, if this one can, TERM=xterm-256color promptdesk ...); "
                f"{instead}")
    encoding = getattr(stderr, "encoding", None) or ""
    try:
        if codecs.lookup(encoding).name == "utf-8":
            return None
    except LookupError:
        pass
    locale = next((f"{name}={os.environ[name]}" for name in ("LC_ALL", "LC_CTYPE", "LANG") if os.environ.get(name)),
                  "no LANG")
    return (f"INVALID_CONFIG: the console draws in Unicode, and this terminal's encoding is {encoding or 'unknown'} "
            f"({locale}): run it in a UTF-8 locale (LANG=C.UTF-8 promptdesk ..., or PYTHONUTF8=1); {instead}")


def _isatty(stream: object) -> bool:
    """Whether `stream` is a terminal (a closed or missing stream is not)."""
    try:
        return bool(stream is not None and stream.isatty())  # type: ignore[attr-defined]
    except (ValueError, OSError, AttributeError):
        return False


def folder_name(text: str) -> str:
    """An argparse type for a folder that must be there (`--characters-dir`), kept as typed: a
    mistyped one is refused, never passed over while the cast is found somewhere else."""
    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is not a folder ({'a file' if path.exists() else 'no such folder'}); "
                                         "give a folder of characters")
    return text


def folder(text: str) -> Path:
    """`folder_name`, as a path."""
    return Path(folder_name(text))


def shown(path: Path) -> Path:
    """A folder as a command names it: relative to the working folder when it lies inside it (as
    `--batch` names `runs/…`), else as it is."""
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve())
    except (OSError, ValueError):
        return Path(path)


def has_terminal() -> bool:
    """Whether stdin and stdout are a terminal, which the console needs (never waits for one)."""
    return _isatty(sys.stdin) and _isatty(sys.stdout)


def refuse_on_terminal(problem: str) -> int:
    """`refuse`, and, when stderr is not the terminal but stdout is (the console refused for stderr sent
    to `/dev/null` or a file), the same words on the terminal too, where they are seen."""
    if not _isatty(sys.__stderr__) and _isatty(sys.stdout):
        print(problem, file=sys.stdout, flush=True)
    return refuse(problem)


def refuse(problem: BaseException | str) -> int:
    """Say on stderr what is wrong (an error of Promptdesk's says it in its own words, with its code)
    and return exit code 2, the code of every command for input that names what to fix."""
    print(str(problem), file=sys.stderr)
    return EXIT_INVALID


def folder_trouble(verb: str, run_dir: Path, exc: OSError) -> str:
    """The refusal for a run folder the system would not let a command read or write (a read-only
    mount, a permission, a full disk): the file and the reason, and what to do, never a traceback."""
    where = f": {exc.filename}" if exc.filename else ""
    if isinstance(exc, FileNotFoundError) and not Path(run_dir).is_dir():  # a mistyped folder: no file to put back
        return f"NOT_A_RUN: {run_dir} is not a folder: give a run folder (runs/<scene>-<stamp>)"
    if isinstance(exc, FileNotFoundError):
        fix = "that file of the run folder is missing: put it back from a copy of the folder"
    elif exc.errno == errno.ENOSPC:
        fix = "the disk is full: free some space"
    else:
        fix = "make the run folder and its files readable and writable by you (or copy the folder somewhere writable)"
    return f"NOT_A_RUN: cannot {verb} {run_dir}: {exc.strerror or exc}{where}; {fix}, then {verb} again"


def sweep_through(make: Callable[[], Any], folder: Path, retry_failed: bool = False) -> int:
    """Build a sweep (of runs or of takes) with `make`, check its plan, prepare its folder and play it
    (`swept`), its failed runs set aside and played again when `retry_failed`. A plan or folder that
    cannot be used is refused (exit 2); a write that failed, or a
    budget already spent, exits 1 before any request, saying why."""
    from promptdesk.core.errors import PromptdeskError, RecordingError

    try:
        sweep = make()
        sweep.retry_failed = retry_failed
        sweep.validate()
        todo = sweep.prepare_folder()
    except RecordingError as exc:
        print(exc, file=sys.stderr)
        return EXIT_FAILED
    except PromptdeskError as exc:
        return refuse(str(exc))
    if todo and sweep.budget_spent():
        sweep.release()
        print(f"{sweep.budget_message(todo)}\nSweep folder: {folder}", file=sys.stderr)
        return EXIT_FAILED
    return swept(sweep, folder, todo)


def swept(sweep, folder: Path, todo: list) -> int:
    """Play a prepared sweep (of runs or of takes) to its end under the signals, say why it stopped
    when a write failed, and give the exit code: 0 every run done, 1 otherwise (a run that failed, in this
    invocation or an earlier one, among them)."""
    import asyncio

    from promptdesk.core.experiments.sweep import run_with_signals

    asyncio.run(run_with_signals(sweep, todo))
    if sweep.failure is not None:
        print(sweep.failure, file=sys.stderr)
    print(f"Sweep folder: {folder}", file=sys.stderr)
    if sweep.any_failed():
        print("Failed runs count as done: run the same command with --retry-failed to play them again "
              "(each failed attempt's record is kept).", file=sys.stderr)
    done = sweep.complete() and not sweep.any_failed() and not sweep.stopping and sweep.failure is None
    return EXIT_CLOSED if done else EXIT_FAILED


def spent(run_dir: Path, tokens: int, cost_usd: float) -> str:
    """A closing summary's tokens and cost as the run's `metadata.json` has them (inherited and
    superseded calls included) with what is unknown said in words (" + unknown (3 calls sent no
    usage)"), never a bare figure that passes an unknown cost for $0; the session's own figures
    when the file cannot be read."""
    from promptdesk.core.record.outputs import unknown_spend

    unknown = ""
    try:
        meta = json.loads((Path(run_dir) / "metadata.json").read_text(encoding="utf-8"))
        costs = meta["costs"]
        tokens, cost_usd, unknown = int(costs["totalTokens"]), float(costs["estimatedUSD"]), unknown_spend(costs)
        unpriced = [str(m) for m in meta.get("unpricedModels") or []]
        unknown += f" + unknown (no price for {', '.join(unpriced)})" if unpriced else ""
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return f"{tokens:,} tokens, ${cost_usd:.4f}{unknown}"
