"""Run every benchmark and print `NAME: VALUE` lines (`python -m benchmarks`).

Each module runs in a fresh interpreter (`--only MODULE`), so that what one leaves in the process (a
500-beat scene's frozen heap, imported SDKs, the loopback server's threads) does not weigh on the
next one's figures, as none of them weighs on a user's run.
"""

from __future__ import annotations

import importlib
import subprocess
import sys

MODULES = ("benchmarks.engine", "benchmarks.providers", "benchmarks.long_scene", "benchmarks.crowd",
           "benchmarks.crowd_sdk", "benchmarks.request_size", "benchmarks.console", "benchmarks.sweep",
           "benchmarks.compare", "benchmarks.console_keys",
           "benchmarks.sotopia_import")


def run_one(name: str) -> int:
    """Run one benchmark module here and print its figures."""
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        print(f"# {name} unavailable: {exc}", file=sys.stderr)
        return 0
    for key, value in module.run().items():
        print(f"{key}: {value:.4f}" if isinstance(value, float) else f"{key}: {value}", flush=True)
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--only"] and len(argv) == 2:
        return run_one(argv[1])
    failed = [name for name in MODULES if subprocess.run([sys.executable, "-m", "benchmarks", "--only", name]).returncode]
    for name in failed:
        print(f"# {name} failed (its error is above)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
