"""The `promptdesk` command: the console by default, `--batch` headless, `replay RUN_DIR`.

Importing this module is cheap: no SDK, no Textual. Each path imports what it needs when taken.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from promptdesk.core.cli import provider_flags
from promptdesk.core.cli.numbers import budget_usd, pace_seconds, positive_int
from promptdesk.core.cli.common import NO_CONSOLE, Console, refuse

def parser() -> argparse.ArgumentParser:
    """Every flag of DESIGN §8, shared by the console and the batch runner."""
    p = argparse.ArgumentParser(
        prog="promptdesk",
        description="A director's console for multi-agent dialogue. With no arguments, opens the console.",
        epilog="Commands: promptdesk audit RUN_DIR... | rebuild RUN_DIR | resume RUN_DIR | branch RUN_DIR --at-beat K | "
               "import FILE... | "
               "sweep SCENE ... | metrics RUN_DIR | compare RUN_DIR... | report RUN_DIR --html FILE "
               "(each with --help). Examples: promptdesk scenes/the-apology.yaml | promptdesk replay runs/X | "
               "promptdesk --batch scenes/the-apology.yaml --isolation b --coordinator C")
    p.add_argument("args", nargs="*", metavar="SCENE | replay RUN_DIR", help="a scene file, or `replay` and a run folder")
    p.add_argument("--batch", metavar="SCENE", type=Path, nargs="?", const=True,
                   help="run SCENE headless to its close (no SCENE with --collaborate GOAL)")
    p.add_argument("--isolation", choices=["a", "b"], help="a: fresh stateless call per turn; b: one thread per actor")
    p.add_argument("--coordinator", choices=["A", "B", "C"], help="A: LLM judge with your notes; B: dedicated LLM judge; C: pure code")
    p.add_argument("--provider", choices=["offline", "anthropic", "openai", "openai-compatible", "claude-code"])
    p.add_argument("--model")
    p.add_argument("--base-url", dest="base_url")
    p.add_argument("--protocol", choices=["tags", "json", "auto"],
                   help="how actors answer: tags (<thinking>/<speech>), json (a JSON schema the server enforces: "
                        "openai, anthropic, openai-compatible), auto (json where the provider can; default: the scene's)")
    p.add_argument("--characters-dir", dest="characters_dirs", action="append", type=Path, default=[], metavar="DIR")
    p.add_argument("--journals", metavar="DIR|none",
                   help="where every character's journal is read and written; `none`: run without memory "
                        "(default: beside a <slug>/profile.md you own, else .promptdesk/journals/ beside the scene)")
    p.add_argument("--out", type=Path, metavar="DIR", help="the run folder (default runs/<scene>-<stamp>)")
    p.add_argument("--seed", type=int)
    p.add_argument("--max-beats", dest="max_beats", type=positive_int)
    p.add_argument("--budget-usd", dest="budget_usd", type=budget_usd, help="close the scene (reason budget) when spent")
    p.add_argument("--pace", type=pace_seconds, metavar="SECONDS",
                   help="minimum seconds per beat, 0 to 60 (default: the scene's pace:, else 0; "
                        "in the console 1.5 on the offline improviser)")
    p.add_argument("--suggested-events", dest="suggested_events", choices=["inject", "ask", "off"],
                   help="world events the coordinator suggests: inject them, ask you (console), or only record "
                        "them (default: the scene's suggested_events:, else ask in the console, off headless)")
    p.add_argument("--quiet", action="store_true", help="batch: print only the summary")
    from promptdesk.core.formats.registry import FORMATS

    provider_flags.add(p)

    for fmt in FORMATS.values():
        fmt.add_flags(p)
    return p


SUBCOMMANDS = {"import": "promptdesk.core.cli.importing", "audit": "promptdesk.core.cli.audit", "rebuild": "promptdesk.core.cli.rebuild",
               "resume": "promptdesk.core.cli.resume", "metrics": "promptdesk.core.cli.metrics", "sweep": "promptdesk.core.cli.sweep",
               "compare": "promptdesk.core.cli.compare", "report": "promptdesk.core.cli.report",
               "branch": "promptdesk.core.cli.branch"}
"""Commands beside the console and `--batch`, each parsed in its own module (`main(argv) -> exit code`)."""


def main(argv: list[str] | None = None, console: Console | None = None) -> int:
    """Every command (the console's own through `console`, given by the `promptdesk` entry point);
    returns the process exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["compare"]:
        from promptdesk.core.cli.compare import main as compare_main
        return compare_main(argv[1:], console)
    if argv[:1] and argv[0] in SUBCOMMANDS:
        return importlib.import_module(SUBCOMMANDS[argv[0]]).main(argv[1:])
    ns = parser().parse_args(argv)
    if ns.batch is not None:
        from promptdesk.core.cli.batch import run_batch
        return run_batch(ns)
    if ns.args[:1] == ["replay"]:
        if len(ns.args) != 2:
            return refuse("INVALID_CONFIG: usage: promptdesk replay RUN_DIR")
        return _console(console, ns, replay=Path(ns.args[1]))
    if len(ns.args) > 1:
        return refuse(f"INVALID_CONFIG: one scene file at most, got {len(ns.args)}: {' '.join(ns.args)}")
    return _console(console, ns, scene=Path(ns.args[0]) if ns.args else None)


def _console(console: Console | None, ns: argparse.Namespace, **where: Path | None) -> int:
    if console is None:
        return refuse(NO_CONSOLE)
    return console.open(ns, **where)


if __name__ == "__main__":
    raise SystemExit(main())
