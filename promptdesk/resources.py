"""The files Promptdesk ships beside its code, found through `importlib.resources`.

The actor system prompt (`actor/`), the console's themes (`themes/`), the roundtable strategies
(`strategies/`) and the example scenes and characters (`scenes/`, `characters/`) are package data of
`promptdesk`: in a checkout they are the top-level folders of those names, in an install they sit
inside the package. Nothing computes a path from where the code lies. A shipped file that is missing
means a damaged install: `MissingResource` names it and says to reinstall (the commands exit 2).

Imports nothing of Promptdesk, so the core and the console may both import it.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

PACKAGE = "promptdesk"

SYSTEM_PROMPT = ("actor", "system-prompt.md")
"""The actor system prompt (spec 000: "SYSTEM PROMPT (from actor/system-prompt.md)")."""
THEMES = ("themes",)
STRATEGIES = ("strategies",)
SCENES = ("scenes",)
CHARACTERS = ("characters",)

EXAMPLE_MARK = "example"
"""How a bundled example scene is labelled beside the operator's own (wizard, errors, `paths`)."""


REINSTALL = ("reinstall promptdesk from where you installed it (pipx reinstall promptdesk, or "
             "uv tool upgrade --reinstall promptdesk; in a virtualenv, pip install --force-reinstall with the "
             "checkout or wheel you installed)")
"""How to repair an install. Each line reinstalls from the source recorded at install time: `promptdesk`
on PyPI is another project, so no line fetches that name from an index."""


class MissingResource(RuntimeError):
    """A file or folder Promptdesk ships is not where the install put it."""

    def __init__(self, parts: tuple[str, ...], where: Path | None) -> None:
        name = "/".join(parts)
        at = f" (looked for {where})" if where is not None else ""
        super().__init__(f"INVALID_CONFIG: Promptdesk's own {name} is missing{at}: the install is damaged; "
                         f"{REINSTALL}")
        self.parts = parts


def root() -> Path:
    """The folder of the installed `promptdesk` package (a real folder: Promptdesk is never run from
    a zip)."""
    found = files(PACKAGE)
    if not isinstance(found, Path):
        raise MissingResource(("package folder",), None)
    return found


def bundled(parts: tuple[str, ...], folder: bool = False) -> Path:
    """The shipped file (or, with `folder`, folder) at `parts`; `MissingResource` when it is absent."""
    path = root().joinpath(*parts)
    if not (path.is_dir() if folder else path.is_file()):
        raise MissingResource(parts, path)
    return path


def system_prompt_file() -> Path:
    """The actor system prompt file Promptdesk ships."""
    return bundled(SYSTEM_PROMPT)


def theme_file(name: str) -> Path:
    """The stylesheet of the console theme `name` (`dark`, `light`)."""
    return bundled((*THEMES, f"{name}.tcss"))


def strategies_dir() -> Path:
    """The folder of the roundtable strategies Promptdesk ships."""
    return bundled(STRATEGIES, folder=True)


def scenes_dir() -> Path:
    """The folder of the example scenes Promptdesk ships."""
    return bundled(SCENES, folder=True)


def characters_dir() -> Path:
    """The folder of the example characters Promptdesk ships (those the example scenes cast)."""
    return bundled(CHARACTERS, folder=True)


CONSOLE_THEMES = ("dark", "light")


def check_console() -> None:
    """Raise `MissingResource` for the first shipped file the console cannot start without (its
    themes, the actor system prompt, the example scenes): checked before the console opens, so a
    damaged install is named and refused instead of a console drawn without its styles."""
    for name in CONSOLE_THEMES:
        theme_file(name)
    system_prompt_file()
    scenes_dir()


def example_scenes() -> dict[str, Path]:
    """Every example scene Promptdesk ships, by name (its file's stem), sorted by name."""
    return {p.stem: p for p in sorted(scenes_dir().glob("*.yaml"))}
