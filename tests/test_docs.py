"""The docs site: built strictly (every link and anchor resolves, every page is in the navigation), its
references generated from the code and current, the scene schema true to the shipped scenes, the
README short, and every offline command the quickstart and the tutorial show runs as written."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from pydantic import BaseModel

from helpers import INSTALL_BY_NAME, ROOT
from promptdesk import resources
from promptdesk.core.cli import reference
from promptdesk.core.cli.schema import schema_of

DOCS = ROOT / "docs"


def test_the_site_builds_strictly(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([Path(sys.executable).with_name("mkdocs"), "build", "--strict", "--site-dir", tmp_path / "site"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "scene-file" / "index.html").is_file()
    # Text written as `<slug>` or `<speech>` outside code is read as an HTML tag and vanishes from the page
    # (`runs/<scene>-<stamp>` showed as `runs/-`): no page of the site holds a tag HTML does not have.
    vanished = {f"{page.parent.relative_to(tmp_path / 'site')}: <{tag}>" for page in (tmp_path / "site").rglob("index.html")
                for tag in re.findall(r"<([A-Za-z][\w-]*)", page.read_text()) if tag.lower() not in HTML_TAGS}
    assert vanished == set()


HTML_TAGS = set("""a abbr article aside b blockquote body br button circle code dd defs details div dl dt em footer form g h1 h2 h3 h4
h5 h6 head header hr html i img input kbd label li line link main meta nav ol option p path polygon polyline pre rect
script section select small span strong style sub summary sup svg symbol table tbody td text th thead title tr tspan u ul
use""".split())


def test_a_table_row_is_cut_into_its_cells_alike_on_a_code_host():
    """GitHub splits a table row at every bar, inside code too (`| `DIR|none` |` is two cells there), and
    Python-Markdown shows an escaped bar's backslash inside code: a code span in a table holds no bar."""
    found = [f"{page.relative_to(ROOT)}:{n}: {code}" for page in [*DOCS.rglob("*.md"), ROOT / "README.md"]
             for n, line in enumerate(page.read_text().splitlines(), 1) if line.lstrip().startswith("|")
             for code in re.findall(r"`[^`]*`", line) if "|" in code]
    assert found == []


def test_every_page_is_in_the_navigation():
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert pages and {p for p in pages if p not in nav} == set()


def test_the_reference_pages_are_what_the_code_generates_now():
    generated = reference.generate()
    stale = [name for name, text in generated.items() if (DOCS / "reference" / name).read_text() != text]
    assert stale == [], f"regenerate with `make docs` (python -m promptdesk.core.cli.reference docs/reference): {stale}"
    shipped = resources.scenes_dir() / reference.SHIPPED_SCHEMA
    assert shipped.read_text() == generated[reference.SHIPPED_SCHEMA], "the schema beside the example scenes is stale"


def models_of(model: type[BaseModel], seen: set | None = None) -> list[type[BaseModel]]:
    """`model` and every model its fields hold, however nested."""
    seen = set() if seen is None else seen
    if model in seen:
        return []
    seen.add(model)
    found = [model]
    for info in model.model_fields.values():
        for arg in _types(info.annotation):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                found += models_of(arg, seen)
    return found


def _types(annotation) -> list:
    """Every type inside a (possibly generic or union) annotation."""
    args = getattr(annotation, "__args__", ())
    return [annotation, *(t for a in args for t in _types(a))]


def scene_models() -> list[type[BaseModel]]:
    from promptdesk.core.casting.scene_file import Scene
    return models_of(Scene)


def test_every_field_of_the_scene_models_is_described_and_in_the_reference():
    page = (DOCS / "reference" / "scene-file.md").read_text()
    sections = {m.split("\n", 1)[0]: m for m in page.split("\n## ")[1:]}
    for model in scene_models():
        name = "Top level" if model.__name__ == "Scene" else model.__name__
        section = sections.get(name, "")
        for field, info in model.model_fields.items():
            assert info.description, f"{model.__name__}.{field} has no description"
            assert f"| `{info.alias or field}` |" in section, f"{model.__name__}.{field} is not in the reference"
    assert len(scene_models()) >= 7


def test_every_command_and_flag_is_in_the_command_line_reference():
    page = (DOCS / "reference" / "cli.md").read_text()
    for name, parser in reference.parsers():
        section = page.split(f"## `{name}`\n", 1)[1].split("\n## ", 1)[0]
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            for flag in action.option_strings or [action.metavar or action.dest]:
                assert reference.cell(f"`{flag}`") in section, (name, flag)


def test_every_shipped_scene_validates_against_the_printed_schema_and_names_it():
    validator = jsonschema.Draft202012Validator(schema_of("scene"))
    for path in resources.example_scenes().values():
        text = path.read_text()
        assert text.startswith("# yaml-language-server: $schema=scene.schema.json\n"), path
        errors = [e.message for e in validator.iter_errors(yaml.safe_load(text))]
        assert errors == [], (path.name, errors)


def test_a_scene_with_an_unknown_key_or_a_wrong_value_does_not_validate():
    validator = jsonschema.Draft202012Validator(schema_of("scene"))
    good = yaml.safe_load(resources.example_scenes()["the-apology"].read_text())
    assert validator.is_valid(good)
    assert not validator.is_valid({**good, "setings": "a typo"})
    assert not validator.is_valid({**good, "limits": {"max_beats": 0}})
    assert not validator.is_valid({**good, "cast": {"bob": {"provider": "gpt-5"}}})
    assert validator.is_valid({**good, "cast": {"bob": {"provider": "openai", "model": "gpt-4o-mini"}}})


@pytest.mark.parametrize("kind", ["scene", "character", "strategy"])
def test_promptdesk_schema_prints_the_schema(capsys, kind):
    from promptdesk.core.cli.main import main

    assert main(["schema", kind]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == schema_of(kind) and printed["$schema"].startswith("https://json-schema.org/")


def test_every_shipped_strategy_validates_against_the_strategy_schema():
    validator = jsonschema.Draft202012Validator(schema_of("strategy"))
    for path in resources.strategies_dir().glob("*.yaml"):
        assert list(validator.iter_errors(yaml.safe_load(path.read_text()))) == [], path


def test_the_readme_is_a_short_shop_window():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.encode()) <= 12 * 1024
    head = "\n".join(readme.splitlines()[:40])
    assert "make run" in head and "make test" in head
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / link).is_file(), link


def test_no_page_installs_promptdesk_by_name_from_an_index():
    assert INSTALL_BY_NAME.search("pipx install promptdesk") and INSTALL_BY_NAME.search("uv tool install 'promptdesk[claude-code]'")
    assert not INSTALL_BY_NAME.search("pipx install ./dist/promptdesk-0.1.0-py3-none-any.whl")
    found = [f"{page.relative_to(DOCS)}: {m[0]}" for page in DOCS.rglob("*.md") if page.name != "changelog.md"
             for m in INSTALL_BY_NAME.finditer(page.read_text())]
    found += [f"README.md: {m[0]}" for m in INSTALL_BY_NAME.finditer((DOCS.parent / "README.md").read_text())]
    assert found == []


def code_block_commands() -> list[tuple[str, str]]:
    """Every `promptdesk ...` line of the docs' code blocks (a leading `$ ` and `VAR=value ` dropped,
    continuation lines joined, a trailing `# comment` cut), with its page."""
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        if page.parent.name == "reference" or page.name == "changelog.md":
            continue
        for block in re.findall(r"```[^\n]*\n(.*?)```", page.read_text(), re.S):
            for line in block.replace("\\\n", " ").splitlines():
                line = re.sub(r"^(?:\w+=\S+ )+", "", line.strip().removeprefix("$ "))
                if line.startswith("promptdesk ") and not re.search(r"\b[A-Z][A-Z_]{2,}\b|\.\.\.|…|\[", line):
                    found.append((str(page.relative_to(DOCS)), re.sub(r"\s+#.*$", "", line)))
    return found


def test_every_command_the_docs_show_is_one_the_command_line_takes():
    import contextlib
    import io
    import shlex

    by_name = dict(reference.parsers())
    commands = code_block_commands()
    assert len(commands) > 40
    refused = []
    for page, command in commands:
        for part in command.split("&&"):
            words = shlex.split(part)[1:]
            name = ("promptdesk sweep --branch-from" if words[:1] == ["sweep"] and "--branch-from" in words else
                    "promptdesk import sotopia" if words[:2] == ["import", "sotopia"] else
                    f"promptdesk {words[0]}" if words and f"promptdesk {words[0]}" in by_name else "promptdesk")
            rest = words[len(name.split()) - 1:] if name != "promptdesk sweep --branch-from" else words[1:]
            err = io.StringIO()
            try:
                with contextlib.redirect_stderr(err):
                    by_name[name].parse_args(rest)
            except SystemExit as exit:
                if exit.code:
                    refused.append(f"{page}: {part.strip()}: {err.getvalue().strip().splitlines()[-1]}")
    assert refused == []


def offline_steps(page: Path) -> tuple[dict[str, str], list[str]]:
    """The files a page writes (code blocks with a `title="path"`) and the commands of the code blocks
    marked `<!-- offline-commands -->`, joined where a line ends with a backslash."""
    text = page.read_text()
    files = {m[1]: m[2] for m in re.finditer(r'```\w+ title="([^"]+)"\n(.*?)```', text, re.S)}
    commands = []
    for block in re.findall(r"<!-- offline-commands -->\n```sh\n(.*?)```", text, re.S):
        commands += [line for line in block.replace("\\\n", " ").splitlines() if line.strip()]
    return files, commands


@pytest.mark.parametrize("page", ["quickstart.md", "tutorial.md", "guide/headless.md"])
def test_the_offline_commands_of_a_page_run_as_written(tmp_path, page):
    files, commands = offline_steps(DOCS / page)
    assert commands and all(c.startswith("promptdesk ") for c in commands), commands
    for name, content in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for command in commands:
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=120, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])


def test_the_reference_generator_takes_help_and_writes_nothing_for_it(tmp_path):
    schema = resources.scenes_dir() / reference.SHIPPED_SCHEMA
    before = schema.stat().st_mtime_ns
    done = subprocess.run([sys.executable, "-m", "promptdesk.core.cli.reference", "--help"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "usage:" in done.stdout and "FOLDER" in done.stdout, done.stderr
    assert list(tmp_path.iterdir()) == [] and schema.stat().st_mtime_ns == before
    wrong = subprocess.run([sys.executable, "-m", "promptdesk.core.cli.reference", "--out", "x"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 2 and "unrecognized arguments: --out" in wrong.stderr
    assert list(tmp_path.iterdir()) == [] and schema.stat().st_mtime_ns == before


def test_what_the_scene_reference_says_each_format_needs_is_what_a_scene_file_needs():
    """The page's opening says what a minimal file of each format holds; exactly that loads, and a
    file missing any one of it is refused."""
    from promptdesk.core.casting.scene_file import FORMATS, scene_from_dict
    from promptdesk.core.errors import InvalidConfig

    page = (DOCS / "reference" / "scene-file.md").read_text()
    for name, fmt in FORMATS.items():
        needs = fmt.needs
        assert needs and reference.needs_sentence(fmt) in page, name
        minimal = {"name": "x", "format": name, "characters": [f"c{i}" for i in range(max(fmt.min_cast(), 2))],
                   **{key: "text" for key in needs}}
        scene_from_dict(minimal)
        for key in needs:
            with pytest.raises(InvalidConfig):
                scene_from_dict({k: v for k, v in minimal.items() if k != key})
        if fmt.min_cast() > 1:
            with pytest.raises(InvalidConfig):
                scene_from_dict({**minimal, "characters": minimal["characters"][:fmt.min_cast() - 1]})


@pytest.mark.parametrize("example", ["the-apology", "roundtable-free", "hiking-plan"])
def test_every_file_a_run_of_each_format_writes_is_in_the_run_folder_reference(tmp_path, example):
    """One example of each format (scene, roundtable, collaborate), played offline: every file and
    folder its run folder holds is named on the reference page."""
    from promptdesk.core.cli.main import main

    out = tmp_path / "run"
    assert main(["--batch", example, "--isolation", "a", "--coordinator", "C", "--provider", "offline", "--seed", "3",
                 "--journals", "none", "--quiet", "--out", str(out)]) == 0
    page = (DOCS / "reference" / "run-folder.md").read_text()
    written = {p.name + ("/" if p.is_dir() else "") for p in out.iterdir()}
    assert {name for name in written if f"`{name.rstrip('/')}" not in page} == set(), written


@pytest.mark.parametrize("prop, says", [({"exclusiveMinimum": 0, "maximum": 1}, " > 0 and ≤ 1"),
                                        ({"minimum": 0, "maximum": 60}, " 0–60"), ({"exclusiveMinimum": 0}, " > 0"),
                                        ({"minimum": 1, "exclusiveMaximum": 5}, " ≥ 1 and < 5")])
def test_a_range_reads_from_its_lower_bound_to_its_upper(prop, says):
    assert reference.bounds(prop, "minimum", "maximum", "", "exclusiveMinimum", "exclusiveMaximum") == says


def test_interrupt_requests_is_named_as_llama_cpp_pythons_setting_never_as_llama_cpps():
    """`--interrupt_requests` is a setting of llama-cpp-python's server (`python -m llama_cpp.server`);
    llama.cpp's own `llama-server` has no such flag and queues what its slots (`-np N`) cannot take. A
    page, the notice of a cut stream or the `--max-concurrency` help that sends a llama.cpp user looking
    for it is wrong."""
    from promptdesk.core.providers.concurrency import CUT_NOTICE

    help_text = next(a.help for a in reference.parsers()[0][1]._actions if "--max-concurrency" in a.option_strings)
    texts = {str(p.relative_to(DOCS)): p.read_text() for p in DOCS.rglob("*.md") if p.name != "changelog.md"}
    texts |= {"CUT_NOTICE": CUT_NOTICE, "--max-concurrency": help_text}
    wrong = [f"{name}: {sentence.strip()}" for name, text in texts.items()
             for sentence in re.split(r"(?<=[.;])\s", re.sub(r"\s+", " ", text))
             if "interrupt_requests" in sentence and not re.search(r"llama-cpp-python|llama_cpp", sentence)]
    assert wrong == []
    assert "one request at a time, e.g. llama-cpp-python's" in help_text


def test_a_commands_synopsis_on_a_page_lists_every_flag_the_command_takes():
    """A code block that shows a command's whole synopsis (`promptdesk branch RUN_DIR --at-beat K [--event
    TEXT] ...`) lists every flag its parser takes, so a reader of the guide misses none."""
    by_name = dict(reference.parsers())
    checked, missing = 0, []
    for page in sorted(DOCS.rglob("*.md")):
        if page.parent.name == "reference" or page.name == "changelog.md":
            continue
        for block in re.findall(r"```\n(.*?)```", page.read_text(), re.S):
            first = block.split()[:2]
            name = " ".join(first)
            if first[:1] != ["promptdesk"] or name not in by_name or "[--" not in block:
                continue
            checked += 1
            shown = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", block))
            flags = {o for a in by_name[name]._actions for o in a.option_strings if o.startswith("--")} - {"--help"}
            missing += [f"{page.relative_to(DOCS)}: {name} {flag}" for flag in sorted(flags - shown)]
    assert checked and missing == []


def test_the_command_line_reference_gives_each_flag_the_default_the_parser_applies():
    """The default column is what the command takes when the flag is left out (`parser.get_default`),
    and a switch shows none: `--no-background-story` beside `--background-story` stores False, and the
    reference once showed it "default True", the opposite of what `import sotopia` does."""
    wrong = []
    for name, parser in reference.parsers():
        rows = {line.split(" | ")[0].removeprefix("| "): line.split(" | ")[2]
                for line in reference.option_rows(parser)[2:]}
        for action in parser._actions:
            if not action.option_strings or isinstance(action, argparse._HelpAction):
                continue
            shown = rows[", ".join(f"`{s}`" for s in action.option_strings)]
            applied = parser.get_default(action.dest)
            if action.nargs == 0:
                expected = "—"
            else:
                expected = "—" if applied in (None, False, []) else f"`{applied}`"
            if shown != expected:
                wrong.append(f"{name} {action.option_strings[0]}: shows {shown}, takes {expected}")
    assert wrong == []


def test_the_reference_generator_never_writes_into_an_installed_package(tmp_path, monkeypatch, capsys):
    """Run from an installed wheel (its example scenes in site-packages, no checkout around them), the
    generator writes the pages where it is told and leaves the package's own schema alone; a FOLDER
    that cannot be written is refused with exit 2, never a traceback."""
    from promptdesk.core.cli.reference import main as generate_pages

    installed = tmp_path / "site-packages" / "promptdesk" / "scenes"
    installed.mkdir(parents=True)
    monkeypatch.setattr(resources, "scenes_dir", lambda: installed)
    assert generate_pages([str(tmp_path / "pages")]) == 0
    assert (tmp_path / "pages" / "cli.md").is_file() and not (installed / reference.SHIPPED_SCHEMA).exists()
    assert "left as it is" in capsys.readouterr().err
    (tmp_path / "a-file").write_text("")
    assert generate_pages([str(tmp_path / "a-file" / "pages")]) == 2
    assert "cannot write the reference pages into" in capsys.readouterr().err
