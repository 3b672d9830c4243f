"""The wizard's provider step: the format, which provider answers, which model, an optional base URL,
and an optional concurrency limit (blank: no limit; 1 for a server that serves one request at a time).

The step says what it needs before Start: the offline improviser needs nothing; the others need a
model name (they have no default model here) and their API key in the environment; an
openai-compatible server needs its base URL. Placeholders are instructions in parentheses, never
something that could be read as a value already filled in.
"""

from __future__ import annotations

import os

from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Input, Label, Select, Static

from promptdesk.core.casting.build import protocol_problem
from promptdesk.tui.choices import PROVIDERS
from promptdesk.tui.formats import registry
from promptdesk.tui.widgets.run_fields import RunFields

MODEL_HINT = {
    "offline": ("Model (blank: the offline improviser, its only model)", "(leave blank)"),
    "anthropic": ("Model (required: Anthropic has no default model here; e.g. a Claude model id)",
                  "(type a model id)"),
    "openai": ("Model (required: OpenAI has no default model here; e.g. a GPT model id)", "(type a model id)"),
    "openai-compatible": ("Model (required: the name your server knows the model by)", "(type a model name)"),
    "claude-code": ("Model (required: the Claude model the Claude Code command runs, e.g. claude-sonnet-4-6)",
                    "(type a model id)"),
}
BASE_URL_HINT = {
    "openai-compatible": ("Base URL (required: your server's address, e.g. Ollama's is http://localhost:11434/v1)",
                          "(type the server's address)"),
}
BASE_URL_OPTIONAL = ("Base URL (blank: the provider's own address)", "(leave blank)")
CONCURRENCY_HINT = ("Max concurrency (blank: no limit; 1 for a server that serves one request at a time, "
                    "e.g. llama-cpp-python's)", "(leave blank for no limit)")
FIELD_NAMES = {"--base-url": "the Base URL field", "--model": "the Model field", "--provider": "the Provider field",
               "--isolation": "the Isolation step", "--coordinator": "the Coordinator step"}


PROVIDER_HINT = {
    "offline": ("offline is a deterministic, seeded improviser, not a language model: no key, no network, the same "
                "run for the same seed."),
    "anthropic": "anthropic calls Anthropic's API: it reads its key from ANTHROPIC_API_KEY in the environment.",
    "openai": "openai calls OpenAI's API: it reads its key from OPENAI_API_KEY in the environment.",
    "openai-compatible": ("openai-compatible calls your own server (Ollama, vLLM, LM Studio…) at its base URL; "
                          "a key, if it needs one, from OPENAI_COMPATIBLE_API_KEY."),
    "claude-code": "claude-code runs the Claude Code command line on this machine (logged in as you are).",
}
"""What the provider chosen is and needs (only that provider's line is shown)."""

KEY_ENVS = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
"""Where each provider reads its API key (as `promptdesk.core.providers` reads it); the others need none."""


def key_env(provider: str) -> str:
    """The environment variable that holds a provider's API key ('' when it needs none)."""
    return KEY_ENVS.get(provider, "")


def in_form_words(message: str) -> str:
    """An engine message about flags, reworded for the wizard: it names the form field instead."""
    for flag, field in FIELD_NAMES.items():
        message = message.replace(f"(or pass {flag})", f"(or fill in {field})").replace(flag, field)
    return message


class ProviderForm(VerticalScroll):
    """Format, provider, model and base URL; preset from the scene file and the flags, freely changeable."""

    DEFAULT_CSS = """
    ProviderForm { height: 1fr; padding: 0 1; }
    ProviderForm > Label { margin-top: 1; width: 1fr; }
    ProviderForm > .hint { color: $text-muted; margin-top: 1; }
    ProviderForm > #needs { margin-top: 1; text-style: bold; color: $warning; }
    ProviderForm > #format-note { color: $warning; display: none; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.provider = "offline"
        """The provider the Model and Base URL fields are filled in for."""
        self.typed: dict[str, tuple[str, str]] = {}
        """(model, base URL) as last filled in for each provider: a value typed for one never stays for another."""

    def compose(self) -> ComposeResult:
        yield Label("Format (preset from the scene file)")
        yield Select([(c.label, c.key) for c in registry.CHOICES], value=registry.DEFAULT, allow_blank=False,
                     id="format")
        yield Static(id="format-note", markup=False)
        yield Label("Provider")
        yield Select([(name, name) for name in PROVIDERS], value="offline", allow_blank=False, id="provider")
        yield Label(Content(MODEL_HINT["offline"][0]), id="model-label")
        yield Input(placeholder=MODEL_HINT["offline"][1], id="model")
        yield Label(Content(BASE_URL_OPTIONAL[0]), id="base-url-label")
        yield Input(placeholder=BASE_URL_OPTIONAL[1], id="base-url")
        yield Label(Content(CONCURRENCY_HINT[0]))
        yield Input(placeholder=CONCURRENCY_HINT[1], id="max-concurrency")
        yield RunFields(id="run-fields")
        yield Static(id="needs", markup=False)
        yield Static(Content(PROVIDER_HINT["offline"]), classes="hint", id="provider-hint")

    def on_mount(self) -> None:
        self.show_needs()

    def preset(self, provider: str, model: str | None, base_url: str | None, max_concurrency: int | None = None) -> None:
        """Fill the form in from the scene file and the flags."""
        if provider in PROVIDERS:
            self.query_one("#provider", Select).value = provider
            self.provider = provider
        self.query_one("#model", Input).value = model or ""
        self.query_one("#base-url", Input).value = base_url or ""
        self.query_one("#max-concurrency", Input).value = str(max_concurrency or "")
        self.typed[self.provider] = (model or "", base_url or "")
        self.show_needs()

    @on(Select.Changed, "#provider")
    def _switched(self, event: Select.Changed) -> None:
        """Another provider: keep what was typed for the last one, and show what was typed for this one."""
        new = str(event.value)
        if new == self.provider:
            return
        model, base_url = self.query_one("#model", Input), self.query_one("#base-url", Input)
        self.typed[self.provider] = (model.value, base_url.value)
        self.provider = new
        model.value, base_url.value = self.typed.get(new, ("", ""))
        self.show_needs()

    def note_format(self, text: str) -> None:
        """Say what the format chosen does to the scene (who it leaves out), or nothing."""
        self.query_one("#format-note", Static).update(text)
        self.query_one("#format-note", Static).display = bool(text)

    @property
    def max_concurrency(self) -> int | None:
        """The limit typed in: None when blank (no limit) or not a positive whole number (`problem` says so)."""
        text = self.query_one("#max-concurrency", Input).value.strip()
        return int(text) if text.isdigit() and int(text) > 0 else None

    @property
    def format(self) -> str:
        """The format chosen: the key of one of the wizard's choices (`promptdesk.tui.formats.registry.CHOICES`)."""
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

    def problem(self) -> str | None:
        """What the step still needs, naming the field (None when it can go on)."""
        provider, model, base_url = self.values
        fields = self.query_one(RunFields).problem()
        if fields:
            return fields
        protocol = protocol_problem(provider, self.query_one(RunFields).values.get("protocol"))
        if protocol:
            return f"Reply {protocol}."
        if provider != "offline" and not model:
            return f"Model: {provider} needs a model name (it has no default model here)."
        if provider == "openai-compatible" and not base_url:
            return "Base URL: openai-compatible needs your server's address."
        if self.query_one("#max-concurrency", Input).value.strip() and self.max_concurrency is None:
            return "Max concurrency: give a positive whole number of calls at once, or leave it blank for no limit."
        env = key_env(provider)
        if env and not os.environ.get(env):
            return (f"API key: {env} is not set in the environment. Set it and start Promptdesk again, "
                    "or choose the offline provider.")
        return None

    @on(Input.Changed)
    def show_needs(self) -> None:
        """Relabel the fields for the provider chosen and say what the step still needs."""
        provider = self.values[0]
        label, placeholder = MODEL_HINT.get(provider, MODEL_HINT["openai-compatible"])
        self.query_one("#model-label", Label).update(Content(label))
        self.query_one("#model", Input).placeholder = placeholder
        label, placeholder = BASE_URL_HINT.get(provider, BASE_URL_OPTIONAL)
        self.query_one("#base-url-label", Label).update(Content(label))
        self.query_one("#base-url", Input).placeholder = placeholder
        self.query_one("#needs", Static).update(self.problem() or "")
        self.query_one("#provider-hint", Static).update(Content(PROVIDER_HINT.get(provider, "")))
