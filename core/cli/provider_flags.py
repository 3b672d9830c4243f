"""The flags that choose and tune the run's provider, one set for every command that plays scenes (the
console, `--batch`, `sweep`): `--provider`, `--model`, `--base-url`, `--protocol`, and
`--max-concurrency N`, `--timeout S`, `--journal-timeout S`, `--send-ahead`. The tuning flags win over
the scene file's `provider:`, `cast:` and `judge:` settings of the same name, for every provider of the run."""

from __future__ import annotations

import argparse
from typing import Any

from promptdesk.core.cli.numbers import positive_int, timeout_seconds
from promptdesk.core.providers.names import PROTOCOL_NAMES as PROTOCOLS
from promptdesk.core.providers.names import PROVIDER_NAMES as PROVIDERS
from promptdesk.core.providers.names import SCHEMA_FORMATS
FLAGS = {"schema_format": "--schema-format", "max_concurrency": "--max-concurrency", "timeout_s": "--timeout",
         "journal_timeout_s": "--journal-timeout", "send_ahead": "--send-ahead"}
"""Provider setting -> its flag."""


PROVIDER_HELP = "who answers (default: the scene's provider:, else offline, the improviser: no key, no network)"


def add(p: argparse.ArgumentParser, provider_help: str = PROVIDER_HELP, *, actors: bool = True) -> None:
    """Add the provider flags to a command's parser, as one group (`provider_help`: what `--provider`
    chooses, and its default, for a command whose default is not the scene's provider). `actors=False`
    for a command whose calls are no actor's turns (`evaluate`): it takes no `--protocol`, and no flag of a
    beat or a journal (`--journal-timeout`, `--send-ahead`), which would do nothing there."""
    g = p.add_argument_group("provider")
    g.add_argument("--provider", choices=PROVIDERS, help=provider_help)
    g.add_argument("--model", help="the model id (anthropic and openai have no default model)")
    g.add_argument("--base-url", dest="base_url", metavar="URL",
                   help="the server's address, e.g. http://127.0.0.1:8080/v1 for a local openai-compatible server")
    if actors:
        g.add_argument("--protocol", choices=PROTOCOLS,
                       help="how actors answer: tags (<thinking>/<speech>), json (a JSON schema the server enforces: "
                            "openai, anthropic, openai-compatible), auto (json where the provider can; default: the "
                            "scene's); scene actors only: collaborate and roundtable runs keep their own replies")
    add_tuning(g, actors=actors)


def add_tuning(g: argparse._ActionsContainer, *, actors: bool = True) -> None:
    """Add the flags that tune every provider of a run without choosing it (`FLAGS`; with `actors=False`,
    those that a command making no actor's turn can use)."""
    g.add_argument("--schema-format", dest="schema_format", choices=SCHEMA_FORMATS,
                   help=f"openai-compatible: how the server takes {'the JSON schema of --protocol json' if actors else 'a JSON schema'}: json_schema "
                        "(llama.cpp's server, vLLM, Ollama, LM Studio; the default) or json_object "
                        "(llama-cpp-python's server)")
    g.add_argument("--max-concurrency", dest="max_concurrency", type=positive_int, metavar="N",
                   help="at most N calls at once to each provider's server, the others queued in arrival order "
                        "(default: no limit; 1 for a server that serves one request at a time, e.g. llama-cpp-python's)")
    g.add_argument("--timeout", dest="timeout_s", type=timeout_seconds, metavar="SECONDS",
                   help="seconds one attempt of a call may take from its start to its last byte, for every provider "
                        "(default: the scene's, else 60)")
    if not actors:
        return
    g.add_argument("--journal-timeout", dest="journal_timeout_s", type=timeout_seconds, metavar="SECONDS",
                   help="seconds one attempt of a journal call may take (default: the call timeout)")
    g.add_argument("--send-ahead", dest="send_ahead", action="store_const", const=True,
                   help="anthropic, openai, openai-compatible: in a parallel beat under isolation b, open each actor's next "
                        "request as soon as its turn is done (its body sent in chunks; the server must take that): "
                        "a crowd's beat no longer waits for every request to be built")


def settings(ns: argparse.Namespace) -> dict[str, Any]:
    """The provider settings the flags give (only those given)."""
    return {key: getattr(ns, key) for key in FLAGS if getattr(ns, key, None) is not None}
