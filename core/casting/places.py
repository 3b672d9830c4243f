"""Where an invocation reads and writes: which file a scene name means, and the folders searched.

A scene is named by its file (`scenes/x.yaml`), or by its name alone: `./scenes/<name>.yaml`, then
the example of that name shipped with Promptdesk (`the-apology`). Runs go to `./runs/`, sweeps to
`./sweeps/`; characters and strategies are searched in the order `search` gives, journals where
`promptdesk.core.characters.journal_store` puts them. `promptdesk paths` prints all of it.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from promptdesk import resources
from promptdesk.core.errors import InvalidConfig

SUFFIXES = (".yaml", ".yml")
RUNS = Path("runs")
SWEEPS = Path("sweeps")


def own_scenes(cwd: Path) -> dict[str, Path]:
    """The scene files in `./scenes/`, by name (file stem)."""
    folder = cwd / "scenes"
    if not folder.is_dir():
        return {}
    return {p.stem: p for p in sorted(folder.iterdir()) if p.suffix in SUFFIXES and p.is_file()}


def examples() -> dict[str, Path]:
    """The example scenes shipped with Promptdesk, by name."""
    return resources.example_scenes()


def is_example(path: Path | None) -> bool:
    """Whether `path` (a scene file or its folder) is among the examples shipped with Promptdesk."""
    if path is None:
        return False
    folder = path if path.is_dir() else path.parent
    return folder.resolve() == resources.scenes_dir().resolve()


def find_scene(given: str | Path, cwd: Path) -> Path:
    """The scene file `given` names: a file that exists; else, for a bare name (`x` or `x.yaml`),
    `./scenes/x.yaml`, then the shipped example `x`. InvalidConfig otherwise, naming the places
    searched and the closest names."""
    text = str(given)
    path = cwd / Path(text)
    if path.is_file():
        return Path(text)
    if path.exists():
        raise InvalidConfig(f"{text} is not a scene file: give a scene file (.yaml) or a scene's name")
    own, shipped = own_scenes(cwd), examples()
    name = Path(text).stem if Path(text).suffix in SUFFIXES else text
    if "/" not in text:
        for known in (own, shipped):
            if name in known:
                return known[name]
    raise InvalidConfig(not_found(text, own, shipped))


def not_found(given: str, own: dict[str, Path], shipped: dict[str, Path], commands: tuple[str, ...] = ()) -> str:
    """The refusal for a name that is neither a file nor a known scene: where it was looked for,
    the scenes that exist, and the closest of them (and of `commands`)."""
    name = Path(given).stem if Path(given).suffix in SUFFIXES else given
    if "/" in given:  # a path is only ever that file
        folder = Path(given).parent
        files = {p.stem: p for p in sorted(folder.iterdir()) if p.suffix in SUFFIXES} if folder.is_dir() else {}
        near = difflib.get_close_matches(name, list(files), n=3, cutoff=0.6)
        hint = f" Did you mean: {', '.join(str(files[n]) for n in near)}?" if near else ""
        if name in shipped:
            hint += (f" `{name}` is an example Promptdesk ships: give its name alone (`{name}`) to play it, "
                     f"or run `promptdesk init` to copy the examples into ./scenes/ to edit.")
        return f"no scene file {given}: there is no such file (a path is not looked for by name).{hint}"
    close = difflib.get_close_matches(name, list(dict.fromkeys([*commands, *own, *shipped])), n=3, cutoff=0.6)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    mine = ", ".join(own) or "none"
    return (f"no scene file or scene named {given!r}.{hint} Looked for the file {given}, "
            f"for ./scenes/{name}.yaml (scenes there: {mine}) and among the examples shipped "
            f"with Promptdesk: {', '.join(shipped) or 'none'}.")
