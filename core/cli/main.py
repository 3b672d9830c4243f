"""The `promptdesk` command: the console by default, `--batch` headless, and the commands beside them.

Importing this module is cheap: no SDK, no Textual. Each path imports what it needs when taken; the
version and the list of commands need nothing at all. Nothing here ever waits for a terminal that is
not there: the console is refused at once without one (exit 2), and a first word that is neither a
command nor a scene is refused with the closest names.
"""

from __future__ import annotations

import argparse
import importlib
import shlex
import sys
from pathlib import Path

from promptdesk.core.cli.common import (HEADLESS_RUN, NO_CONSOLE, Console, Parser, exit_codes, folder, has_terminal,
                                        in_background, no_terminal, cannot_draw, refuse,
                                        refuse_on_terminal)
from promptdesk.core.cli.numbers import budget_usd, pace_seconds, positive_int
from promptdesk.core.cli.streams import CLOSED, stand_in_for_closed
from promptdesk.core.errors import EXIT_CLOSED, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_INVALID

COMMANDS: dict[str, tuple[str, str]] = {
    "replay": ("", "RUN_DIR: play a run folder back in the console"),
    "audit": ("audit", "RUN_DIR...: re-check every request of a run against its private material"),
    "rebuild": ("rebuild", "RUN_DIR: rewrite a run's derived files from its events.jsonl"),
    "resume": ("resume", "RUN_DIR: continue a killed run from its log"),
    "branch": ("branch", "RUN_DIR --at-beat K: take a scene again from a beat, with a change"),
    "import": ("importing", "FILE...: character cards and personas to Promptdesk characters"),
    "sweep": ("sweep", "SCENE... --isolation a,b --coordinator A,B,C --seeds 1-10: every combination "
                       "(several scenes, --models: a benchmark)"),
    "evaluate": ("evaluate", "RUN_DIR...: score a closed run's actors on a rubric (Sotopia's seven dimensions)"),
    "metrics": ("metrics", "RUN_DIR: a run's metrics, from its log alone"),
    "compare": ("compare", "RUN_DIR...|SWEEP_DIR: runs or a sweep's conditions side by side"),
    "report": ("report", "RUN_DIR|SWEEP_DIR --html FILE: one self-contained HTML page"),
    "init": ("init", "[DIR]: a folder of scenes, characters and strategies to edit"),
    "paths": ("paths", "[SCENE]: where this invocation reads and writes"),
    "schema": ("schema", "scene|character|strategy: the JSON Schema of that file"),
}
"""Every command beside the console and `--batch`: its module in `promptdesk.core.cli` (`main(argv) -> exit
code`, `parser()`) and its line in the help."""

CODES = exit_codes("the scene closed (for any reason, a stop included), or the console was quit",
                   "a run that failed (its calls failed, an engine error, a run folder that could not be written)")


def epilog() -> str:
    """The commands, examples and exit codes that end `promptdesk --help`."""
    width = max(map(len, COMMANDS))
    lines = [f"  {name:<{width}}  {summary}" for name, (_, summary) in COMMANDS.items()]
    return "\n".join([
        "Commands (each with --help):", *lines, "",
        "Examples:",
        "  promptdesk                                   the console: pick a scene, make the two choices, watch",
        "  promptdesk the-apology                       the console on a scene (a file, or a name in ./scenes/ or the examples)",
        "  promptdesk --batch the-apology --isolation b --coordinator C",
        "  promptdesk replay runs/the-apology-20261128-101500",
        "", CODES])


def parser() -> argparse.ArgumentParser:
    """Every flag of the console and `--batch` (DESIGN §8)."""
    from promptdesk.core.cli import provider_flags
    from promptdesk.core.formats.registry import add_flags

    p = Parser(
        prog="promptdesk", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=epilog(),
        description="A director's console for multi-agent dialogue. With no arguments, opens the console.")
    p.add_argument("args", nargs="*", metavar="SCENE | replay RUN_DIR",
                   help="a scene file or a scene's name, or `replay` and a run folder")
    p.add_argument("-V", "--version", action="store_true", help="print the version and exit")
    p.add_argument("--batch", metavar="SCENE", type=Path, nargs="?", const=True,
                   help="run SCENE (a file or a name) headless to its close (no SCENE with --collaborate GOAL)")
    p.add_argument("--isolation", choices=["a", "b"], help="a: fresh stateless call per turn; b: one thread per actor")
    p.add_argument("--coordinator", choices=["A", "B", "C"], help="A: LLM judge with your notes; B: dedicated LLM judge; C: pure code")
    p.add_argument("--characters-dir", dest="characters_dirs", action="append", type=folder, default=[], metavar="DIR",
                   help="a folder to look for characters in first (repeatable); then ./characters/, ./.claude/agents/ "
                        "and the scene's own (promptdesk paths)")
    p.add_argument("--journals", metavar="DIR|none",
                   help="where every character's journal is read and written; `none`: run without memory "
                        "(default: beside a <slug>/profile.md you own, else .promptdesk/journals/ beside the scene)")
    p.add_argument("--out", type=Path, metavar="DIR", help="the run folder (default runs/<scene>-<stamp>)")
    p.add_argument("--seed", type=int, metavar="N", help="the run's seed (default: the scene's seed:, else random)")
    p.add_argument("--max-beats", dest="max_beats", type=positive_int, metavar="N",
                   help="the scene's beat limit (default: the scene's limits.max_beats)")
    p.add_argument("--budget-usd", dest="budget_usd", type=budget_usd, metavar="USD",
                   help="close the scene (reason budget) when its calls have cost this much")
    p.add_argument("--pace", type=pace_seconds, metavar="SECONDS",
                   help="minimum seconds per beat, 0 to 60 (default: the scene's pace:, else 0; "
                        "in the console 1.5 on the offline improviser)")
    p.add_argument("--suggested-events", dest="suggested_events", choices=["inject", "ask", "off"],
                   help="world events the coordinator suggests: inject them, ask you (console), or only record "
                        "them (default: the scene's suggested_events:, else ask in the console, off headless)")
    p.add_argument("--quiet", action="store_true", help="batch: no line per turn, only the notices about the run and the summary")
    provider_flags.add(p)
    add_flags(p)
    return p


def main(argv: list[str] | None = None, console: Console | None = None) -> int:
    """Every command (the console's own through `console`, given by the `promptdesk` entry point);
    returns the process exit code. Output that cannot be written (`> file` on a full disk, a closed
    stdout) is said in a line, exit 1, never a traceback; a reader that went away (`| head`) ends the printing quietly."""
    import errno
    import os

    argv = sys.argv[1:] if argv is None else list(argv)
    stand_in_for_closed()
    _escape_what_stdout_cannot_show()
    try:
        code = _main(argv, console)
        if sys.stdout is not None:
            sys.stdout.flush()  # what is still buffered is written here, where a failure can be told
        return code
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_FAILED
    except KeyboardInterrupt:  # Ctrl-C in a command with no graceful stop of its own (metrics, import, report…)
        _silence_stdout()
        print("Interrupted (Ctrl-C).", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:  # a name given (a scene, a run, a folder) the file system cannot hold
            return refuse(_too_long(exc))
        if isinstance(exc, FileNotFoundError) and not _working_folder_exists():
            return refuse("INVALID_CONFIG: the working folder no longer exists (it was deleted or moved while this "
                          "shell was in it), and this command reads or writes there: cd into a folder that exists "
                          "and run it again")
        if exc.errno == errno.EBADF and exc.strerror == CLOSED:
            sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - the interpreter's last flush goes there
            print(f"RECORDING_ERROR: could not write the output: {CLOSED} (>&-); give it a file or a pipe",
                  file=sys.stderr)
            return EXIT_FAILED
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO):
            raise
        _silence_stdout()
        print(f"RECORDING_ERROR: could not write {exc.filename or 'the output'}: {exc.strerror}; free space there, "
              "or send the output elsewhere", file=sys.stderr)
        return EXIT_FAILED


def _main(argv: list[str], console: Console | None) -> int:
    if argv[:1] in (["-V"], ["--version"]):
        from promptdesk import version
        print(f"promptdesk {version()}")
        return EXIT_CLOSED
    from promptdesk.resources import MissingResource

    try:
        if argv[:1] and argv[0] in COMMANDS and argv[0] != "replay":
            return _command(argv[0], argv[1:], console)
        if len(argv) > 1 and (refusal := _mistyped_command(argv[0])):
            return refuse(refusal)
        return _play(argv, console)
    except MissingResource as exc:
        return refuse(exc)
    except PermissionError as exc:  # a folder of someone else's (runs are 0700) that a command reads
        return refuse(f"INVALID_CONFIG: {exc.filename or 'a file'}: {exc.strerror or 'permission denied'}; "
                      "make it readable (and, for a command that writes, writable) by you, or work on a copy of "
                      "the folder that is yours")
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2, already printed)
        return exc.code if isinstance(exc.code, int) else EXIT_INVALID


def _working_folder_exists() -> bool:
    import os

    try:
        os.getcwd()
    except OSError:
        return False
    return True


def _too_long(exc: OSError) -> str:
    """The refusal for a path with a name longer than the file system allows (255 bytes a name on most,
    4,096 a path): the name, cut, its length, and what to do; it was a traceback wherever a command first
    looked."""
    import os

    path = os.fsdecode(exc.filename) if exc.filename is not None else ""
    long = [part for part in Path(path).parts if len(os.fsencode(part)) > 255]
    what, text = ("name", long[0]) if long else ("path", path)
    size = len(os.fsencode(text))
    text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
    shown = text if len(text) <= 60 else text[:60] + "…"
    most = "a name of at most 255 bytes" if long else "a path of at most 4,096 bytes"
    return (f"INVALID_CONFIG: the {what} {shown!r} is too long for the file system ({size:,} bytes; most take "
            f"{most}): give a shorter one")


def _mistyped_command(word: str) -> str | None:
    """The refusal for a first word, followed by more, that is no scene but reads like a command
    (`auditt runs/x`): it names the closest commands before the rest is parsed as the console's flags."""
    import difflib

    from promptdesk.core.casting import places
    from promptdesk.core.errors import InvalidConfig

    if word.startswith("-") or word in COMMANDS or not difflib.get_close_matches(word, list(COMMANDS), n=1, cutoff=0.6):
        return None
    try:
        places.find_scene(word, Path.cwd())
    except InvalidConfig:
        return "INVALID_CONFIG: " + places.not_found(word, places.own_scenes(Path.cwd()), places.examples(),
                                                     commands=tuple(COMMANDS))
    return None


def _escape_what_stdout_cannot_show() -> None:
    """On a terminal whose encoding cannot show a character (an ASCII or Latin-1 locale), write it as
    an escape (`\\xd7`), as stderr does, never a traceback halfway through a help or a table."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(errors="backslashreplace")
        except (ValueError, OSError):  # a closed or detached stream: nothing will be printed anyway
            pass


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush stays quiet."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):  # no stdout at all (its descriptor closed): nothing to silence
        pass
    finally:
        os.close(devnull)


def _command(name: str, argv: list[str], console: Console | None) -> int:
    module = importlib.import_module(f"promptdesk.core.cli.{COMMANDS[name][0]}")
    return module.main(argv, console) if name == "compare" else module.main(argv)


def _play(argv: list[str], console: Console | None) -> int:
    """The console (on a scene or a replay) or `--batch`."""
    ns = parser().parse_args(argv)
    if ns.version:
        return main(["--version"])
    if ns.batch is not None:
        from promptdesk.core.cli.batch import run_batch
        return run_batch(ns)
    if ns.args[:1] == ["replay"]:
        if len(ns.args) != 2:
            return refuse("INVALID_CONFIG: usage: promptdesk replay RUN_DIR")
        run = Path(ns.args[1])
        if not (run / "events.jsonl").is_file():  # said first, terminal or not, as a scene not found is
            shown = "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii")
                            for c in str(run))
            return refuse(f"INVALID_CONFIG: {shown} is not a run folder (no events.jsonl in it): give a folder a "
                          "run wrote (runs/<scene>-<stamp>, or a run's --out)")
        return _console(console, ns, replay=run)
    if len(ns.args) > 1:
        return refuse(f"INVALID_CONFIG: one scene at most, got {len(ns.args)}: {' '.join(ns.args)}")
    scene = None
    if ns.args:
        from promptdesk.core.casting import places
        from promptdesk.core.errors import InvalidConfig

        try:
            scene = places.find_scene(ns.args[0], Path.cwd())
        except InvalidConfig:
            return refuse("INVALID_CONFIG: " + places.not_found(ns.args[0], places.own_scenes(Path.cwd()), places.examples(),
                                           commands=(*COMMANDS, "--version", "--help", "--batch")))
    return _console(console, ns, scene=scene)


def _console(console: Console | None, ns: argparse.Namespace, **where: Path | None) -> int:
    if console is None:
        return refuse(NO_CONSOLE)
    instead = _headless(ns, where.get("replay"))
    if not has_terminal():
        return refuse(no_terminal(instead))
    if refusal := in_background(instead) or cannot_draw(instead):
        return refuse_on_terminal(refusal)
    return console.open(ns, **where)


def _headless(ns: argparse.Namespace, replay: Path | None) -> str:
    """What works without the console: for a replay, what reads the run; else the headless run of what
    was asked (the collaboration of this goal, the scene as it was typed, or any scene)."""
    if replay is not None:
        return f"to read the run without it: promptdesk metrics {shlex.quote(str(replay))}, or its transcript.md"
    if ns.collaborate is not None:
        return ("for a headless run use --batch: promptdesk --batch --collaborate "
                f"{shlex.quote(ns.collaborate)} --isolation a|b --coordinator A|B|C")
    if ns.args:
        return (f"for a headless run use --batch: promptdesk --batch {shlex.quote(ns.args[0])} "
                "--isolation a|b --coordinator A|B|C")
    return HEADLESS_RUN


if __name__ == "__main__":
    raise SystemExit(main())
