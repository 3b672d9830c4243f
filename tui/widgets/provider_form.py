"""The wizard's provider step: the format, which provider answers, which model, and an optional base URL."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Input, Label, Select, Static

from tui.choices import PROVIDERS
from tui.scene_formats import FORMATS


class ProviderForm(VerticalScroll):
    """Format, provider, model and base URL; preset from the scene file and the flags, freely changeable."""

    DEFAULT_CSS = """
    ProviderForm { height: 1fr; padding: 0 1; }
    ProviderForm > Label { margin-top: 1; }
    ProviderForm > .hint { color: $text-muted; margin-top: 1; }
    """

    def compose(self) -> ComposeResult:
        yield Label("Format (preset from the scene file)")
        yield Select([(label, key) for key, label in FORMATS], value="scene", allow_blank=False, id="format")
        yield Label("Provider")
        yield Select([(name, name) for name in PROVIDERS], value="offline", allow_blank=False, id="provider")
        yield Label("Model (blank: the provider's default)")
        yield Input(placeholder="default", id="model")
        yield Label("Base URL (openai-compatible servers: Ollama, vLLM, llama.cpp, LM Studio)")
        yield Input(placeholder="http://localhost:11434/v1", id="base-url")
        yield Static(Content("offline is a deterministic, seeded improviser, not a language model: no key, no "
                             "network, the same run for the same seed. The others need their API key in the "
                             "environment (ANTHROPIC_API_KEY, OPENAI_API_KEY)."), classes="hint")

    def preset(self, provider: str, model: str | None, base_url: str | None) -> None:
        """Fill the form in from the scene file and the flags."""
        if provider in PROVIDERS:
            self.query_one("#provider", Select).value = provider
        self.query_one("#model", Input).value = model or ""
        self.query_one("#base-url", Input).value = base_url or ""

    @property
    def format(self) -> str:
        """The format chosen: single, collaborate, scene or roundtable."""
        return str(self.query_one("#format", Select).value)

    @format.setter
    def format(self, key: str) -> None:
        self.query_one("#format", Select).value = key

    @property
    def values(self) -> tuple[str, str | None, str | None]:
        """(provider, model or None, base URL or None)."""
        provider = str(self.query_one("#provider", Select).value)
        model = self.query_one("#model", Input).value.strip() or None
        base_url = self.query_one("#base-url", Input).value.strip() or None
        return provider, model, base_url
