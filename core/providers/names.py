"""The names of the providers and of the actor protocols, importing nothing: the command line's
flags read them without loading a provider or pydantic."""

from __future__ import annotations

PROVIDER_NAMES = ("offline", "anthropic", "openai", "openai-compatible", "claude-code")
PROTOCOL_NAMES = ("tags", "json", "auto")
SCHEMA_FORMATS = ("json_schema", "json_object")
"""How an openai-compatible server takes a JSON schema (`promptdesk.core.providers.spec.SchemaFormat`)."""
