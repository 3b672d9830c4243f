"""The wizard's first step: every scene file in `scenes/`, or any path typed in."""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from tui.lines import safe


def scene_files(cwd: Path) -> list[Path]:
    """The example scenes: `scenes/*.yaml` and `*.yml` under `cwd`, sorted by name."""
    folder = cwd / "scenes"
    return sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")]) if folder.is_dir() else []


class ScenePicker(Vertical):
    """Lists scene files; Enter on one, or a path typed and submitted, picks it."""

    DEFAULT_CSS = """
    ScenePicker { height: 1fr; padding: 0 1; }
    ScenePicker > OptionList { height: auto; max-height: 60%; min-height: 3; }
    ScenePicker > .status { height: auto; max-height: 12; margin-top: 1; }
    """

    class Picked(Message):
        """The operator picked a scene file."""

        def __init__(self, path: Path) -> None:
            super().__init__()
            self.path = path
            """The scene file (not yet validated)."""

    def __init__(self, cwd: Path, chosen: Path | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.cwd = cwd
        self.files = scene_files(cwd)
        self.chosen = chosen

    def compose(self) -> ComposeResult:
        yield Label("Pick a scene (Enter), or type the path of a scene file:")
        yield OptionList(*[Option(Content(safe(self._label(p))), id=str(i)) for i, p in enumerate(self.files)])
        yield Input(placeholder="path/to/scene.yaml", value=self._label(self.chosen) if self.chosen else "",
                    id="scene-path")
        yield Static(Content(""), classes="status")

    def _label(self, path: Path) -> str:
        try:
            return str(path.resolve().relative_to(self.cwd.resolve()))
        except ValueError:
            return str(path)

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        if self.chosen is not None and self.chosen.resolve() in [p.resolve() for p in self.files]:
            options.highlighted = [p.resolve() for p in self.files].index(self.chosen.resolve())
        self.focus_first()

    def focus_first(self) -> None:
        """Focus the list of scenes (the path field when there is none)."""
        (self.query_one(OptionList) if self.files else self.query_one(Input)).focus()

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        path = self.files[int(event.option.id or 0)]
        self.query_one(Input).value = self._label(path)
        self.post_message(self.Picked(path))

    @on(Input.Submitted)
    def _typed(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip():
            path = Path(event.value.strip()).expanduser()
            self.post_message(self.Picked(path if path.is_absolute() else self.cwd / path))

    def show_status(self, text: str, ok: bool) -> None:
        """Say what the picked scene is, or why it cannot be used (the engine's message, literally)."""
        status = self.query_one(".status", Static)
        status.set_class(ok, "ok")
        status.set_class(not ok, "error")
        status.update(Content(safe(text)))
