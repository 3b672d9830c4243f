"""Run every benchmark and print `NAME: VALUE` lines (`python -m benchmarks`)."""

from __future__ import annotations

import importlib
import sys

MODULES = ("benchmarks.engine", "benchmarks.providers", "benchmarks.long_scene", "benchmarks.crowd", "benchmarks.console",
           "benchmarks.sweep")


def main() -> int:
    for name in MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            print(f"# {name} unavailable: {exc}", file=sys.stderr)
            continue
        for key, value in module.run().items():
            print(f"{key}: {value:.4f}" if isinstance(value, float) else f"{key}: {value}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
