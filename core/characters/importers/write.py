"""Writing an `Imported` character as `<slug>/profile.md` and its scene snippet."""

from __future__ import annotations

from pathlib import Path

import yaml

from promptdesk.core.characters.importers.model import Imported, ImportProblem
from promptdesk.core.characters.search import answering_in

SNIPPET_NAME = "scene-snippet.yaml"


def profile_text(imported: Imported) -> str:
    """The profile: front matter (name, description, provenance), a `# Name` title, the sections."""
    front = {"name": imported.name, **({"description": imported.description} if imported.description else {}),
             **imported.front}
    title = f"# {imported.name}" + (f" - {imported.role}" if imported.role else "")
    body = "\n\n".join(f"## {heading}\n\n{text}" for heading, text in imported.sections)
    dumped = yaml.safe_dump(front, allow_unicode=True, sort_keys=False, width=100).strip()
    return f"---\n{dumped}\n---\n{title}\n\n{body}\n"


def snippet_text(imported: Imported) -> str:
    """A scene snippet suggesting how to cast the character: setting/prompt and the opener."""
    slug = imported.slug
    source = " ".join(str(imported.front.get("source", "?")).split())
    lines = [f"# Suggestions for a scene with {imported.name} (imported from {source}).",
             "# Add the other characters, then save as scenes/<name>.yaml."]
    scene: dict[str, object] = {"name": f"{slug}-scene", "title": f"A scene with {imported.name}",
                                "characters": [slug]}
    if scenario := imported.snippet.get("scenario"):
        scene["setting"] = scenario.splitlines()[0][:200]
        scene["prompt"] = scenario
    if opener := imported.snippet.get("opener"):
        scene["initial_speaker"] = slug
        scene["perspectives"] = {slug: f"You open the scene. In the original card you began with: {opener}"}
    lines.append(yaml.safe_dump(scene, allow_unicode=True, sort_keys=False, width=100).strip())
    return "\n".join(lines) + "\n"


def target_of(imported: Imported, to: Path) -> Path:
    """The character folder the import would create."""
    if not imported.slug:
        raise ImportProblem(f"cannot make a slug from the name {imported.name!r}; rename the character first")
    return Path(to) / imported.slug


def check_free(imported: Imported, to: Path, force: bool) -> bool:
    """Whether the import replaces the folder it writes (only with `force`); refused when that folder
    exists without `force`, and, `force` or not, when another file of `to` already answers to the slug
    (`<slug>.md`, or a file whose `name:` folds to it): writing beside it would leave the name ambiguous."""
    folder = target_of(imported, to)
    others = [(c, how) for c, how in answering_in(imported.slug, Path(to)) if c.profile != folder / "profile.md"]
    if others:
        listed = ", ".join(f"{c.profile} (by {how})" for c, how in others)
        raise ImportProblem(f"{listed} already answers to `{imported.slug}` in {to}, and is not a folder import wrote: "
                            f"importing beside it would make `{imported.slug}` ambiguous, so nothing was overwritten "
                            f"(--force replaces only {folder}/); rename that file or change its `name:`, or import "
                            f"--to another folder")
    if (folder.exists() or folder.is_symlink()) and not force:
        raise ImportProblem(f"{folder} already exists; nothing was overwritten (use --force to replace it)")
    return folder.exists()


def write(imported: Imported, to: Path) -> Path:
    """Write profile and snippet; returns the character folder."""
    folder = target_of(imported, to)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "profile.md").write_text(profile_text(imported), encoding="utf-8")
    (folder / SNIPPET_NAME).write_text(snippet_text(imported), encoding="utf-8")
    return folder
