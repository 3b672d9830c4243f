"""`promptdesk paths [SCENE] [--characters-dir DIR]... [--journals DIR|none]`: where this invocation
reads scenes, characters and strategies, and writes runs, sweeps and journals, in the order searched.

Given a scene, every place is the one that scene's run would use (its own folders, its journal store).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from promptdesk import resources, version
from promptdesk.core.casting import places
from promptdesk.core.characters import journal_store
from promptdesk.core.characters.loading import search_dirs
from promptdesk.core.cli.common import command_parser, exit_codes, folder, refuse
from promptdesk.core.errors import EXIT_CLOSED, PromptdeskError


def parser() -> argparse.ArgumentParser:
    p = command_parser("promptdesk paths", "Print where this invocation reads scenes, characters and strategies and "
                       "writes runs, sweeps and journals (for SCENE: where its run would).",
                       exit_codes("printed", None, "a scene that cannot be found or read"))
    p.add_argument("scene", nargs="?", metavar="SCENE", help="a scene file, or a scene's name")
    p.add_argument("--characters-dir", dest="characters_dirs", action="append", type=folder, default=[], metavar="DIR",
                   help="a folder searched first for characters, as the console and --batch take it")
    p.add_argument("--journals", metavar="DIR|none", help="as the console and --batch take it")
    return p


def listed(folders: list[Path], cwd: Path) -> list[str]:
    """Folders in order, each relative to `cwd` when under it, marked when absent."""
    return [f"{i}. {shown(d, cwd)}{'' if d.is_dir() else '  (absent)'}" for i, d in enumerate(folders, 1)]


def shown(path: Path, cwd: Path) -> str:
    """`path` as `./x` under the working folder, else whole."""
    try:
        return f"./{path.resolve().relative_to(cwd.resolve())}"
    except ValueError:
        return str(path)


def main(argv: list[str]) -> int:
    """The command: exit 0 printed, 2 when the scene cannot be found or read."""
    from promptdesk.core.casting.scene_file import load_scene
    from promptdesk.core.formats.registry import FORMATS

    ns = parser().parse_args(argv)
    cwd = Path.cwd()
    scene = path = None
    try:
        if ns.scene:
            path = places.find_scene(ns.scene, cwd)
            scene = load_scene(path)
        folder = scene.folder if scene else None
        store, explicit = journal_store.store_for(ns.journals, scene.journals if scene else None,
                                                  None if places.is_example(folder) else folder, cwd)
    except PromptdeskError as exc:
        return refuse(exc)
    own, shipped = places.own_scenes(cwd), places.examples()
    name = scene.name if scene else "<scene>"
    lines = [f"Promptdesk {version()}, working folder {cwd}", ""]
    if path is not None:
        lines += [f"Scene: {shown(cwd / path, cwd)}", ""]
    lines += ["Scenes, by name: ./scenes/ (" + (", ".join(own) or "none") + "), then the examples shipped with "
              f"Promptdesk ({resources.scenes_dir()}: {', '.join(shipped)})", ""]
    lines += ["Characters, first found wins:", *listed(search_dirs(ns.characters_dirs, cwd, folder), cwd), ""]
    for fmt in FORMATS.values():
        for kind, folders in fmt.search_places(folder, cwd, scene).items():
            lines += [f"{kind}, first found wins:", *listed(folders, cwd), ""]
    lines += [f"Runs:     {shown(cwd / places.RUNS, cwd)}/{name}-<YYYYmmdd-HHMMSS>/ (or --out DIR)",
              f"Sweeps:   {shown(cwd / places.SWEEPS, cwd)}/{name}-<YYYYmmdd-HHMMSS>/ (or --out DIR)"]
    if store is None:
        lines.append("Journals: none (the run has no memory: nothing read, nothing written)")
    elif explicit:
        lines.append(f"Journals: {shown(store, cwd)}/<character>.md, for every character")
    else:
        lines.append(f"Journals: beside the profile for a <character>/profile.md folder you own; every other "
                     f"character's in {shown(store, cwd)}/<character>.md")
    print("\n".join(lines))
    return EXIT_CLOSED
