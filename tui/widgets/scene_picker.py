"""The wizard's first step: every scene file in `scenes/` and the examples shipped with Promptdesk
(marked as examples), or any path or scene name typed in."""

from __future__ import annotations

from pathlib import Path

import yaml
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from promptdesk.core.casting import places
from promptdesk.core.errors import InvalidConfig
from promptdesk.tui.line_input import LineInput
from promptdesk.tui.lines import safe


LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when PyYAML has it (ten times faster: the list opens with every scene's title)."""
_TITLES: dict[tuple[str, int, int], str] = {}


def scene_title(path: Path) -> str:
    """The scene file's `title:` (else its `name:`), read without validating it ('' when unreadable);
    read again only when the file changed."""
    try:
        stat = path.stat()
    except OSError:
        return ""
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _TITLES:
        _TITLES[key] = _read_title(path)
    return _TITLES[key]


def _read_title(path: Path) -> str:
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=LOADER)  # noqa: S506 - a safe loader
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return ""
    if not isinstance(data, dict):
        return ""
    title = data.get("title") or data.get("name")
    return title.strip() if isinstance(title, str) else ""


def scene_files(cwd: Path) -> tuple[list[Path], set[Path]]:
    """The scenes to list: `scenes/*.yaml` and `*.yml` under `cwd`, sorted by name, then the examples
    shipped with Promptdesk whose names `scenes/` does not already use (as `promptdesk NAME` would
    find them); and which of those are examples."""
    own, shipped = places.own_scenes(cwd), places.examples()
    extra = [path for name, path in shipped.items() if name not in own]
    return [*own.values(), *extra], set(extra)


class ScenePath(LineInput):
    """The field for a scene file's path or a scene's name. No path or name holds a `?`, so `?` is left to
    the console: it shows the keys, as it does everywhere else."""

    def check_consume_key(self, key: str, character: str | None) -> bool:
        return character != "?" and super().check_consume_key(key, character)

    async def _on_key(self, event: events.Key) -> None:
        """`?` opens the keys (and is not typed); anything else is the field's (Textual calls `LineInput`'s
        handler after this one)."""
        if event.character == "?":
            event.stop()
            event.prevent_default()
            await self.app.run_action("app.help")


class SceneList(OptionList):
    """The scenes listed. The step says "or type the path…": a character typed here (but `?`, which shows
    the keys, and space) starts a path or a scene's name in the field below (replacing what it held, as
    a field entered with `tab` does), and every key after it goes there too, in order; so a name that
    starts with `q` or `t` is typed, never taken for quit or the theme."""

    def check_consume_key(self, key: str, character: str | None) -> bool:
        return bool(character) and character.isprintable() and not character.isspace() and character != "?"

    def on_key(self, event: events.Key) -> None:
        if not self.check_consume_key(event.key, event.character):
            return
        event.stop()
        event.prevent_default()
        field = self.screen.query_one("#scene-path", Input)
        field.focus()  # done later, in order: the field selects its text, then takes the key
        self.app.call_later(field.post_message, events.Key(event.key, event.character))


class ScenePicker(Vertical):
    """Lists scene files by title and file; Enter on one, or a path typed and submitted, picks it.
    `suggested` (the last scene played) only puts the cursor on its row: nothing is picked for the operator."""

    DEFAULT_CSS = """
    ScenePicker { height: 1fr; padding: 0 1; }
    ScenePicker > Label { width: 1fr; }
    ScenePicker > OptionList { height: auto; max-height: 60%; min-height: 3; }
    ScenePicker > .status { height: auto; max-height: 12; margin-top: 1; }
    """

    class Picked(Message):
        """The operator picked a scene file."""

        def __init__(self, path: Path) -> None:
            super().__init__()
            self.path = path
            """The scene file (not yet validated)."""

    def __init__(self, cwd: Path, chosen: Path | None = None, suggested: Path | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.cwd = cwd
        self.files, self.examples = scene_files(cwd)
        self.chosen = chosen
        self.suggested = suggested

    def compose(self) -> ComposeResult:
        yield Label("Pick a scene (Enter), or type the path of a scene file or a scene's name:")
        yield SceneList(*[Option(self._row(p), id=str(i)) for i, p in enumerate(self.files)])
        yield ScenePath(placeholder="path/to/scene.yaml", value=self._label(self.chosen) if self.chosen else "",
                        id="scene-path")
        yield Static(Content(""), classes="status")

    def _row(self, path: Path) -> Content:
        """One row of the list: the scene's title, then its file."""
        title = safe(scene_title(path))
        return Content.assemble(*([(title, "bold"), "  "] if title else []), (safe(self._label(path)), "dim"))

    def _label(self, path: Path) -> str:
        if path in self.examples:
            return f"example: {path.stem}"
        try:
            return str(path.resolve().relative_to(self.cwd.resolve()))
        except ValueError:
            return str(path)

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        files = [p.resolve() for p in self.files]
        near = self.chosen or self.suggested
        if near is not None and near.resolve() in files:
            options.highlighted = files.index(near.resolve())
        self.focus_first()

    def focus_first(self) -> None:
        """Focus the list of scenes (the path field when there is none)."""
        (self.query_one(OptionList) if self.files else self.query_one(Input)).focus()

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        path = self.files[int(event.option.id or 0)]
        self.query_one(Input).value = path.stem if path in self.examples else self._label(path)
        self.post_message(self.Picked(path))

    @on(Input.Submitted)
    def _typed(self, event: Input.Submitted) -> None:
        event.stop()
        typed = event.value.strip()
        if typed:
            path = Path(typed).expanduser()
            try:
                path = places.find_scene(path, self.cwd)
            except (InvalidConfig, OSError):  # OSError: a name the file system cannot hold (over 255 bytes)
                pass  # the wizard says why it cannot be read, naming the file as typed
            self.post_message(self.Picked(path if path.is_absolute() else self.cwd / path))

    def show_status(self, text: str, ok: bool) -> None:
        """Say what the picked scene is, or why it cannot be used (the engine's message, literally)."""
        status = self.query_one(".status", Static)
        status.set_class(ok, "ok")
        status.set_class(not ok, "error")
        status.update(Content(safe(text)))
