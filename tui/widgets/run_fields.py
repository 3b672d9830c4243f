"""The wizard's run fields, on the provider step: the seed, and what the chosen format lets the operator set.

Which bounds a format has is the format's to say (`promptdesk.tui.formats.base.ConsoleFormat.wizard_fields`): a
scene has a beat cap and a reply protocol (`--protocol`: how its actors answer, tags or JSON), a
collaboration a first speaker and a round cap (it keeps its own JSON envelopes, so it has no reply
protocol, nor has a roundtable, which keeps its YAML). Every format has a seed. Blank means "as the
scene file says", and each placeholder says what that is.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Label, Select
from textual.widgets._select import SelectOverlay

from promptdesk.tui.formats import registry

FIELDS = ("seed", "protocol", "max_beats", "first", "max_rounds")
"""Every run field, in the order shown."""
NAMES = {"seed": "Seed", "protocol": "Reply protocol", "max_beats": "Max beats", "first": "First speaker",
         "max_rounds": "Round cap"}


def constraining() -> list[str]:
    """The providers that can constrain a reply to JSON: those the engine takes `protocol: json` for."""
    from promptdesk.core.casting.build import protocol_problem
    from promptdesk.tui.choices import PROVIDERS

    return [name for name in PROVIDERS if protocol_problem(name, "json") is None]


PROTOCOLS = (("tags: tagged lines, parsed and checked", "tags"),
             (f"json: one JSON object, constrained by the provider ({', '.join(constraining())} only)", "json"),
             ("auto: json where the provider can constrain it, else tags", "auto"))
"""The reply protocols (`promptdesk.core.providers.spec.ProviderSpec.protocol`), as the wizard offers them."""
EVERY_FORMAT = ("seed",)
"""The fields every format has (the format adds its own bounds)."""


class FieldSelect(Select[str]):
    """A run field's list: opened on the blank value ("as the scene file says"), that row is highlighted,
    so `↓` moves to the first option and `Enter` picks it (Textual highlights no row there, and `↓` then
    lands on the blank row, so `↓ Enter` kept the blank)."""

    def _watch_expanded(self, expanded: bool) -> None:
        super()._watch_expanded(expanded)
        if expanded and self.is_blank():
            self.query_one(SelectOverlay).select(0)


class RunFields(Vertical):
    """Seed, max beats, first speaker, round cap: those the format chosen has, the others hidden."""

    DEFAULT_CSS = """
    RunFields { height: auto; }
    RunFields > Label { margin-top: 1; width: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield Label("Seed", id="seed-label")
        yield Input(type="integer", placeholder="(blank: the scene's seed, else a random one)", id="seed")
        yield Label("Reply protocol", id="protocol-label")
        yield FieldSelect(PROTOCOLS, prompt="(blank: as the scene file says)", id="protocol")
        yield Label("Max beats", id="max_beats-label")
        yield Input(type="integer", placeholder="(blank: the scene's limit)", id="max_beats")
        yield Label("First speaker", id="first-label")
        yield FieldSelect([], prompt="(blank: as the scene file says)", id="first")
        yield Label("Round cap", id="max_rounds-label")
        yield Input(type="integer", placeholder="(blank: the scene's cap)", id="max_rounds")

    def show_for(self, key: str, scene: Any | None) -> None:
        """Show the fields of format choice `key` for `scene` (as that format: None when it does not fit)."""
        shown = (*EVERY_FORMAT, *registry.offering(key).wizard_fields(key)) if scene is not None else ("seed",)
        for name in FIELDS:
            self.query_one(f"#{name}-label").display = name in shown
            self.query_one(f"#{name}").display = name in shown
        if scene is None:
            return
        hints = registry.offering(key).field_defaults(scene)
        if scene.seed is not None:
            self.query_one("#seed", Input).placeholder = f"(blank: the scene's seed, {scene.seed})"
        if "protocol" in shown:
            self.query_one("#protocol", Select).prompt = f"(blank: as the scene file says, {scene.provider.protocol})"
        for name in ("max_beats", "max_rounds"):
            if name in hints:
                self.query_one(f"#{name}", Input).placeholder = f"(blank: the scene's, {hints[name]})"
        first = self.query_one("#first", Select)
        if "first" in shown:
            value = first.value
            first.set_options([(slug, slug) for slug in scene.characters])
            first.prompt = f"(blank: {hints.get('first', 'as the scene file says')})"
            if value in scene.characters:
                first.value = value

    def number(self, name: str) -> int | None:
        """A number field's value (None when blank or hidden)."""
        field = self.query_one(f"#{name}", Input)
        text = field.value.strip()
        return int(text) if field.display and text.lstrip("-").isdigit() else None

    @property
    def values(self) -> dict[str, Any]:
        """The fields filled in and shown, by name (`seed`, `protocol`, `max_beats`, `first`, `max_rounds`)."""
        values: dict[str, Any] = {name: self.number(name) for name in ("seed", "max_beats", "max_rounds")}
        for name in ("first", "protocol"):
            choice = self.query_one(f"#{name}", Select)
            values[name] = choice.value if choice.display and isinstance(choice.value, str) else None
        return {name: value for name, value in values.items() if value is not None}

    def problem(self) -> str | None:
        """A field that does not hold what it must, named (None when all do)."""
        for name in ("seed", "max_beats", "max_rounds"):
            field = self.query_one(f"#{name}", Input)
            text = field.value.strip()
            if not field.display or not text:
                continue
            if not text.lstrip("-").isdigit():
                return f"{NAMES[name]}: a whole number, or blank."
            if name != "seed" and int(text) < 1:
                return f"{NAMES[name]}: 1 or more, or blank."
        return None

    def suggest(self, values: dict[str, Any]) -> None:
        """Fill the fields in with earlier values (the last scene's)."""
        for name in ("seed", "max_beats", "max_rounds"):
            if values.get(name) is not None:
                self.query_one(f"#{name}", Input).value = str(values[name])
        if values.get("protocol") in {value for _, value in PROTOCOLS}:
            self.query_one("#protocol", Select).value = values["protocol"]

