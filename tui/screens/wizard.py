"""The setup wizard: scene → cast check → choice 1 → choice 2 → provider and model → confirm.

Must present, must record: both pre-experiment choices are shown with spec 000's trade-offs and
nothing pre-selected (a choice made in the scene file or by a flag is shown as chosen and can be
changed); there is no way past a choice without an answer. Starting builds the session through
`promptdesk.core.casting.build.build_session`, whose run writes `notes.md` before any actor is spawned.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button, ContentSwitcher, Input, RadioSet, Select, Static

from promptdesk.core.characters.loading import search_dirs
from promptdesk.core.errors import PromptdeskError
from promptdesk.core.casting.scene_file import Scene, load_scene
from promptdesk.core.casting.build import RunOptions, build_session
from promptdesk.tui.choices import COORDINATOR, ISOLATION
from promptdesk.tui.formats import registry
from promptdesk.tui.lines import safe
from promptdesk.tui.summary import scene_status, summary
from promptdesk.tui.widgets.cast_check import CastCheck
from promptdesk.tui.widgets.choice_picker import ChoicePicker
from promptdesk.tui.widgets.key_bar import KeyBar
from promptdesk.tui.widgets.provider_form import ProviderForm, in_form_words
from promptdesk.tui.widgets.run_fields import RunFields
from promptdesk.tui.widgets.scene_picker import ScenePicker
from promptdesk.tui.widgets.step_bar import StepBar

STEPS = ("scene", "cast", "isolation", "coordinator", "provider", "confirm")
LABELS = ("Scene", "Cast", "Isolation", "Coordinator", "Provider", "Confirm")
SceneTransform = Callable[[Scene], Scene]


def left_out(scene: Scene, shaped: Scene | None, label: str) -> str:
    """Who of `scene`'s cast the format (`label`) leaves out once `shaped` to it ('' for nobody)."""
    if shaped is None:
        return ""
    gone = [slug for slug in scene.characters if slug not in shaped.characters]
    if not gone:
        return ""
    kept = ", ".join(shaped.characters)
    first = "only the scene's first character" if len(shaped.characters) == 1 else \
        f"the scene's first {len(shaped.characters)} characters"
    named = gone[0] if len(gone) == 1 else f"{', '.join(gone[:-1])} and {gone[-1]}"
    return f"{label} takes {first} ({kept}): {named} {'is' if len(gone) == 1 else 'are'} left out."


class WizardScreen(Screen[None]):
    """Walks the operator from a scene file to a running stage."""

    BINDINGS = [
        Binding("ctrl+n", "next", "Next", id="wizard.next",
                tooltip="Go on to the next step (dimmed until this step is answered)"),
        Binding("escape", "back", "Back", id="wizard.back", tooltip="Go back one step"),
    ]
    DEFAULT_CSS = """
    WizardScreen > #title { height: 1; padding: 0 1; }
    WizardScreen > StepBar { margin-bottom: 1; }
    WizardScreen > ContentSwitcher { height: 1fr; }
    WizardScreen > #nav { height: 3; padding: 0 1; }
    WizardScreen > #nav > #why { width: 1fr; height: 3; content-align: left middle; color: $warning; }
    WizardScreen > #nav > Button { width: auto; min-width: 10; margin-left: 1; }
    WizardScreen #step-confirm { padding: 0 1; }
    """

    def __init__(self, options: RunOptions, scene_path: Path | None = None, cwd: Path | None = None,
                 scene_transform: SceneTransform | None = None, last: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.last = dict(last or {})
        """The last scene's set-up ("New scene"): its scene and choices are suggested, never chosen."""
        self.options = options
        self.cwd = Path(cwd or options.cwd or Path.cwd())
        self.scene_path = scene_path
        self.scene_transform = scene_transform
        self.scene: Scene | None = None
        self.step = 0
        self._steps: asyncio.Future[None] | None = None

    def compose(self) -> ComposeResult:
        yield Static(Content("Promptdesk · set up a scene"), id="title")
        yield StepBar(LABELS, id="steps")
        with ContentSwitcher(initial="step-scene"):
            yield ScenePicker(self.cwd, self.scene_path, suggested=self.last.get("scene"), id="step-scene")
        with Horizontal(id="nav"):
            yield Static(id="why", markup=False)
            yield Button("Back", id="back")
            yield Button("Next", variant="primary", id="next")
        yield KeyBar()

    def later_steps(self) -> list[Widget]:
        """Every step after the scene's, hidden: mounted once the scene list is on screen (opening the
        wizard then costs the scene list only), or at once when the wizard opens on a scene."""
        steps = [VerticalScroll(CastCheck(), id="step-cast"),
                 ChoicePicker(ISOLATION, suggested=self.last.get("isolation"), id="step-isolation"),
                 ChoicePicker(COORDINATOR, suggested=self.last.get("coordinator"), id="step-coordinator"),
                 ProviderForm(id="step-provider"),
                 VerticalScroll(Static(id="summary"), Static(classes="error", id="start-error"), id="step-confirm")]
        for step in steps:
            step.display = False
        return steps

    async def steps_mounted(self) -> None:
        """Wait until every step is mounted (mounting them if no one has yet)."""
        if self._steps is None:
            self._steps = asyncio.ensure_future(self.query_one(ContentSwitcher).mount(*self.later_steps()))
        await self._steps

    async def on_mount(self) -> None:
        if self.scene_path is not None:
            await self.steps_mounted()
            self.load(self.scene_path)
        else:
            self.call_after_refresh(self.steps_mounted)
        self.show_step()

    # -- state of the steps -------------------------------------------------------------------

    def picker(self, name: str) -> ChoicePicker:
        """The picker of a choice (`isolation` or `coordinator`)."""
        return self.query_one(f"#step-{name}", ChoicePicker)

    def ready(self, step: int | None = None) -> bool:
        """Whether a step is answered, so that Next may go on."""
        name = STEPS[self.step if step is None else step]
        if name == "scene":
            return self.scene is not None
        if name == "cast":
            return self.query_one(CastCheck).ok
        if name in ("isolation", "coordinator"):
            return self.picker(name).value is not None
        return (all(self.ready(i) for i in range(STEPS.index("provider")))
                and self.query_one(ProviderForm).problem() is None)

    def why_not(self) -> str:
        """Why Next is dimmed on this step, naming what to do ('' when the step is answered)."""
        if self.ready():
            return ""
        name = STEPS[self.step]
        if name == "scene":
            return ("Next: this scene file has a problem (above): fix it or pick another."
                    if self.scene_path is not None and self.scene is None
                    else "Next: pick a scene first (Enter on one, or type a path and Enter).")
        if name == "cast":
            return "Next: the cast check failed (above). Fix the character files, or esc and pick another scene."
        if name in ("isolation", "coordinator"):
            letters = " or ".join(o.key for o in self.picker(name).choice.options)
            return f"Next: choose an option first (press {letters})."
        earlier = next((i for i in range(STEPS.index("provider")) if not self.ready(i)), None)
        if earlier is not None:
            return f"Next: step {earlier + 1} ({LABELS[earlier]}) is not answered yet."
        return f"Next: {self.query_one(ProviderForm).problem()}"

    def on_key(self, event: events.Key) -> None:
        """The Next key on a step not yet answered says why instead of nothing."""
        active = self.app.active_bindings.get(event.key)
        if active is not None and active.binding.id == "wizard.next" and not active.enabled:
            event.stop()
            event.prevent_default()
            self.notify(self.why_not() or "This step is not answered yet.", title="Not yet", severity="warning",
                        markup=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Next is dimmed until the step is answered; Back on the first step."""
        if action == "next":
            return True if self.ready() else None
        if action == "back":
            return True if self.step > 0 else None
        return True

    def show_step(self) -> None:
        """Show the current step and refresh the step bar, the buttons and the footer."""
        self.query_one(ContentSwitcher).current = f"step-{STEPS[self.step]}"
        self.query_one(StepBar).current = self.step
        self.query_one("#next", Button).label = "Start the scene" if STEPS[self.step] == "confirm" else "Next"
        self.query_one("#back", Button).disabled = self.step == 0
        self._answered()
        self._focus_step()

    def _focus_step(self) -> None:
        """Focus a widget of the step shown, never one left on a hidden step (which would take the keys)."""
        name = STEPS[self.step]
        target = {"isolation": "#step-isolation RadioSet", "coordinator": "#step-coordinator RadioSet",
                  "provider": "#step-provider Select"}.get(name)
        if target:
            self.query_one(target).focus()
        elif name == "scene":
            self.query_one(ScenePicker).focus_first()
        elif not self.query_one("#next", Button).disabled:
            self.query_one("#next", Button).focus()
        else:
            self.query_one(f"#step-{name}").focus()

    # -- answering ---------------------------------------------------------------------------

    def load(self, path: Path) -> None:
        """Read and validate a scene file; preset what it already chose."""
        picker = self.query_one(ScenePicker)
        try:
            scene = load_scene(path)
            if self.scene_transform is not None:
                scene = self.scene_transform(scene)
        except PromptdeskError as exc:
            self.scene = None
            picker.show_status(str(exc), ok=False)
        else:
            self.scene, self.scene_path = scene, path
            picker.show_status(scene_status(scene), ok=True)
            self._preset(scene)
        self.show_step()

    def _preset(self, scene: Scene) -> None:
        for name, flag, in_file in (("isolation", self.options.isolation, scene.isolation),
                                    ("coordinator", self.options.coordinator, scene.coordinator)):
            if self.picker(name).value is None:
                self.picker(name).preset(flag or in_file, "the command line" if flag else "the scene file")
        self.query_one(ProviderForm).format = registry.choice_of(scene)
        self._format_chosen()
        flag_provider = self.options.provider
        same = flag_provider in (None, scene.provider.name)
        self.query_one(ProviderForm).preset(flag_provider or scene.provider.name,
                                            self.options.model or (scene.provider.model if same else None),
                                            self.options.base_url or (scene.provider.base_url if same else None),
                                            self.options.provider_settings.get("max_concurrency")
                                            or scene.provider.max_concurrency)
        if self.last.get("provider") and flag_provider is None:
            self.query_one(ProviderForm).preset(*self.last["provider"])
        self.query_one(RunFields).suggest({"seed": self.options.seed, "max_beats": self.options.max_beats,
                                           "protocol": self.options.protocol, **self.last.get("fields", {})})

    @on(Select.Changed, "#format")
    def _format_chosen(self) -> None:
        """The format chosen: its run fields, and who it leaves out of the scene's cast (said, never silent)."""
        if self.scene is None:
            return
        form = self.query_one(ProviderForm)
        try:
            scene = registry.as_choice(self.scene, form.format)
        except PromptdeskError:
            scene = None
        form.query_one(RunFields).show_for(form.format, scene)
        form.note_format(left_out(self.scene, scene, registry.label(form.format)))

    @on(ScenePicker.Picked)
    async def _picked(self, event: ScenePicker.Picked) -> None:
        await self.steps_mounted()
        self.load(event.path)
        if self.scene is not None:
            await self.action_next()

    @on(ChoicePicker.Chosen)
    @on(RadioSet.Changed)
    @on(Select.Changed)
    @on(Input.Changed)
    def _answered(self) -> None:
        self.query_one("#next", Button).disabled = not self.ready()
        self.query_one("#why", Static).update(self.why_not())
        self.refresh_bindings()

    @on(Button.Pressed, "#next")
    async def action_next(self) -> None:
        """Go on (or start the scene from the last step)."""
        await self.steps_mounted()
        if not self.ready():
            return
        if STEPS[self.step] == "confirm":
            self.start()
            return
        self.step += 1
        if STEPS[self.step] == "cast" and self.scene is not None:
            self.query_one(CastCheck).check(self.scene, self.search_dirs())
        if STEPS[self.step] == "confirm":
            self._confirm()
        self.show_step()

    def _confirm(self) -> None:
        """The summary of what will run, in the format chosen (or why that format does not fit)."""
        error = self.query_one("#start-error", Static)
        error.update("")
        try:
            scene = self.chosen_scene()
        except PromptdeskError as exc:
            scene = self.scene
            error.update(Content(safe(in_form_words(f"Cannot run as {self.query_one(ProviderForm).format}: {exc}"))))
        note = left_out(self.scene, scene if scene is not self.scene else None, registry.label(
            self.query_one(ProviderForm).format)) if self.scene is not None else ""
        self.query_one("#summary", Static).update(summary(scene, self.run_options(), note,
                                                            self.query_one(CastCheck).names))

    def chosen_scene(self) -> Scene:
        """The scene file in the format chosen on the provider step, with that format's run fields applied."""
        assert self.scene is not None
        key = self.query_one(ProviderForm).format
        scene = registry.as_choice(self.scene, key)
        return registry.offering(key).tuned(scene, self.query_one(RunFields).values)

    @on(Button.Pressed, "#back")
    def action_back(self) -> None:
        """Go back one step."""
        if self.step > 0:
            self.step -= 1
            self.show_step()

    def search_dirs(self) -> list[Path]:
        """Where characters are looked up, as the engine will look."""
        return search_dirs(self.options.characters_dirs, self.cwd, self.scene.folder if self.scene else None)

    def run_options(self) -> RunOptions:
        """The run options with both choices and the provider step applied."""
        assert self.scene is not None
        provider, model, base_url = self.query_one(ProviderForm).values
        fields = self.query_one(RunFields).values
        spec, limit = self.scene.provider, self.query_one(ProviderForm).max_concurrency
        settings = {k: v for k, v in self.options.provider_settings.items() if k != "max_concurrency"}
        if limit != spec.max_concurrency:  # blank over a scene's limit: no limit
            settings["max_concurrency"] = limit
        return replace(self.options, isolation=self.picker("isolation").value, provider_settings=settings,
                       seed=fields.get("seed", self.options.seed), protocol=fields.get("protocol", self.options.protocol),
                       max_beats=fields.get("max_beats", self.options.max_beats),
                       coordinator=self.picker("coordinator").value, cwd=self.cwd,
                       provider=provider if provider != spec.name else None,
                       model=model if model != spec.model else None,
                       base_url=base_url if base_url != spec.base_url else None, realtime=True)

    def start(self) -> None:
        """Build the session and hand it to the stage (its run writes notes.md first)."""
        from promptdesk.tui.screens.stage import StageScreen

        assert self.scene is not None
        try:
            scene = self.chosen_scene()
            session = build_session(scene, self.run_options())
        except Exception as exc:  # noqa: BLE001 - any failure is shown in place, never a crash
            self.query_one("#start-error", Static).update(Content(safe(in_form_words(f"Cannot start: {exc}"))))
            return
        provider = (*self.query_one(ProviderForm).values, self.query_one(ProviderForm).max_concurrency)
        self.app.last_choices = {"scene": self.scene_path, "isolation": self.picker("isolation").value,
                                 "coordinator": self.picker("coordinator").value, "provider": provider,
                                 "fields": self.query_one(RunFields).values}
        self.app.switch_screen(StageScreen(session, title=scene.title or scene.name,
                                           options=self.run_options()))
