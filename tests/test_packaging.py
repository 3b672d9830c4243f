"""Promptdesk as installed software: the wheel, built from the committed files and installed with its
dependencies (the versions uv.lock pins, from the cache `make test`'s own install filled: no network)
into a fresh virtualenv outside the checkout, plays from an empty folder.

One test, in order, because it shares one build and one install: the distribution owns one import
package; `--version` and every command's `--help` answer; a bundled example plays by name and audits
clean; a bundled roundtable plays with the shipped strategies; `promptdesk init` writes a folder whose
scene plays; without a terminal the console is refused at once; a damaged install is named.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from helpers import ROOT
from promptdesk.core.cli.main import COMMANDS

PLAY = ["--isolation", "b", "--coordinator", "C", "--provider", "offline", "--seed", "5", "--quiet"]


def uv() -> str:
    """The uv installer `make test` fetched (`UV`, else `.uv/bin/uv` in the checkout), else one on PATH."""
    for candidate in (os.environ.get("UV"), str(ROOT / ".uv" / "bin" / "uv"), shutil.which("uv")):
        if candidate and Path(candidate).is_file():
            return candidate
    raise AssertionError("uv is needed to build and install the wheel: run the suite with `make test`")


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120,
        stdin: int | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=stdin)
    return done


def checkout_copy(dest: Path) -> Path:
    """The files of the checkout a clone would hold (committed, or new and not ignored), links kept as links."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        source, target = ROOT / name, dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink() and not target.is_symlink():
            target.symlink_to(os.readlink(source))
        elif source.is_file():
            shutil.copy2(source, target)
    return dest


def package_files(site: Path) -> dict[str, bytes]:
    """Every file of the installed package but compiled bytecode, by path, with its bytes."""
    return {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def test_the_wheel_installs_with_one_import_name_and_plays_from_an_empty_folder(tmp_path):
    source = checkout_copy(tmp_path / "source")
    built = run(uv(), "build", "--wheel", "--sdist", "--no-build-isolation", "--python", sys.executable,
                "--out-dir", tmp_path / "dist", source, cwd=tmp_path)
    assert built.returncode == 0, built.stderr[-3000:]
    wheel = next((tmp_path / "dist").glob("promptdesk-*.whl"))
    with tarfile.open(next((tmp_path / "dist").glob("promptdesk-*.tar.gz"))) as sdist:
        tops = {Path(*Path(name).parts[1:2]).as_posix() for name in sdist.getnames() if len(Path(name).parts) > 1}
    assert tops == {"promptdesk", "promptdesk.egg-info", "PKG-INFO", "pyproject.toml", "setup.cfg", "README.md",
                    "MANIFEST.in", "LICENSE"}, f"the sdist carries the package and its metadata, not the suite: {tops}"
    venv = tmp_path / "venv"
    made = run(uv(), "venv", "--python", sys.executable, venv, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(venv)}
    locked = run(uv(), "sync", "--frozen", "--offline", "--no-dev", "--no-install-project", cwd=source, env=env,
                 timeout=300)
    assert locked.returncode == 0, locked.stderr[-3000:]
    installed = run(uv(), "pip", "install", "--offline", "--no-deps", "--python", venv / "bin" / "python", wheel,
                    cwd=tmp_path)
    assert installed.returncode == 0, installed.stderr[-3000:]

    site = Path(run(venv / "bin" / "python", "-c", "import promptdesk, pathlib; print(pathlib.Path(promptdesk.__file__).parent)",
                    cwd=tmp_path).stdout.strip())
    assert site.is_dir() and ROOT not in site.parents, site
    info = next(site.parent.glob("promptdesk-*.dist-info"))
    tops = {line.split("/", 1)[0] for line in (info / "RECORD").read_text().splitlines() if not line.startswith("..")}
    assert tops == {"promptdesk", info.name}, tops
    assert (info / "top_level.txt").read_text().split() == ["promptdesk"]
    assert not (site.parent / "core").exists() and not (site.parent / "tui").exists()

    assert (site / "characters" / ".promptdesk-examples").is_file(), "the shipped characters carry their marker"
    shipped = package_files(site)

    empty = tmp_path / "empty"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PROMPTDESK_JOURNAL_STORE", "PYTHONPATH")}
    promptdesk = venv / "bin" / "promptdesk"

    started = time.monotonic()
    shown = run(promptdesk, "--version", cwd=empty, env=env)
    assert shown.returncode == 0 and shown.stdout == "promptdesk 0.1.0\n", shown
    for name in [None, *(n for n in COMMANDS if n != "replay")]:
        helped = run(promptdesk, *([name] if name else []), "--help", cwd=empty, env=env)
        assert helped.returncode == 0 and "Exit codes: 0 " in helped.stdout, (name, helped.stderr)

    played = run(promptdesk, "--batch", "the-apology", *PLAY, cwd=empty, env=env)
    assert played.returncode == 0, played.stderr[-2000:]
    runs = sorted((empty / "runs").iterdir())
    assert [r.name.startswith("the-apology-") for r in runs] == [True]
    audited = run(promptdesk, "audit", runs[0], cwd=empty, env=env)
    assert audited.returncode == 0 and "Audit clean" in audited.stdout, audited.stdout + audited.stderr
    assert not list(site.rglob(".promptdesk")), "no journal store inside the installed package"

    table = run(promptdesk, "--batch", "roundtable-six-hats", *PLAY, cwd=empty, env=env)
    assert table.returncode == 0, table.stderr[-2000:]

    made = run(promptdesk, "init", "stage", cwd=empty, env=env)
    assert made.returncode == 0, made.stderr
    again = run(promptdesk, "--batch", "scenes/morning-kitchen.yaml", *PLAY, cwd=empty / "stage", env=env)
    assert again.returncode == 0, again.stderr[-2000:]

    assert package_files(site) == shipped, "a run never writes into the installed package (journals included)"

    refused = run(promptdesk, cwd=empty, env=env, stdin=subprocess.DEVNULL, timeout=5)
    assert refused.returncode == 2 and "the console needs a terminal" in refused.stderr

    (site / "actor" / "system-prompt.md").unlink()
    damaged = run(promptdesk, "--batch", "the-apology", *PLAY, cwd=empty, env=env)
    assert damaged.returncode == 2
    assert "actor/system-prompt.md is missing" in damaged.stderr and "reinstall promptdesk" in damaged.stderr
    assert time.monotonic() - started < 240


def test_make_with_a_python_without_pip_says_what_to_do_and_takes_a_uv_you_have(tmp_path):
    """`make run` needs only Python, but the uv bootstrap goes through pip, which Debian's and Ubuntu's
    python3 lack: the Makefile says so and names both ways on (nothing is fetched). A uv given as
    `make UV=/abs/uv` is used as given, by the suite's own subprocesses too."""
    for name in ("Makefile", "uv.lock", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    bare = tmp_path / "bare"
    made = run(sys.executable, "-m", "venv", "--without-pip", bare, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    done = run("make", f"PY={bare / 'bin' / 'python'}", "run", cwd=tmp_path, timeout=30)
    assert done.returncode != 0
    assert f"{bare / 'bin' / 'python'} has no pip, which fetches uv" in done.stderr, done.stderr
    assert "make UV=$(command -v uv) run" in done.stderr and not (tmp_path / ".uv").exists()
    planned = run("make", "-n", f"UV={uv()}", "test", cwd=tmp_path)
    assert f"UV={uv()} " in planned.stdout and "//" not in planned.stdout.split("pytest")[0], planned.stdout
