"""The command line as installed software: it never waits for a terminal that is not there, every
command helps (its --help exits 0 and ends with its exit codes), a mistyped word gets the closest
names, scenes are found by name (./scenes/, then the shipped examples), `init` writes a folder to edit
and never overwrites, `paths` says where things are read and written, and a damaged install is named."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

import pytest

from helpers import INSTALL_BY_NAME, ROOT
from promptdesk import resources
from promptdesk.core.cli import main as cli
from promptdesk.core.cli.main import COMMANDS, main

PLAY = ["--isolation", "b", "--coordinator", "C", "--provider", "offline", "--seed", "3", "--quiet"]


def promptdesk(*args: str, cwd: Path, timeout: float = 20) -> subprocess.CompletedProcess:
    """`python -m promptdesk ARGS` with stdin and stdout not a terminal (as from a script or CI)."""
    return subprocess.run([sys.executable, "-m", "promptdesk", *args], cwd=cwd, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


class TestNeverHangs:
    @pytest.mark.parametrize("args", [(), ("version",), ("the-apology",), ("replay", "runs/x")])
    def test_without_a_terminal_the_console_is_refused_at_once(self, tmp_path, args):
        (tmp_path / "runs" / "x").mkdir(parents=True)
        (tmp_path / "runs" / "x" / "events.jsonl").write_text("")
        started = time.monotonic()
        done = promptdesk(*args, cwd=tmp_path)
        assert time.monotonic() - started < 5
        assert done.returncode == 2, done.stderr
        if args == ("version",):
            assert "Did you mean: --version?" in done.stderr
        elif args[:1] == ("replay",):
            assert "the console needs a terminal" in done.stderr and "promptdesk metrics runs/x" in done.stderr
        else:
            assert "the console needs a terminal" in done.stderr and "--batch" in done.stderr

    @pytest.mark.parametrize(("args", "headless"), [
        (("--collaborate", "plan a trip"), "promptdesk --batch --collaborate 'plan a trip' --isolation a|b"),
        (("my scene.yaml",), "promptdesk --batch 'my scene.yaml' --isolation a|b --coordinator A|B|C"),
        (("the-apology", "--seed", "4"), "promptdesk --batch the-apology --isolation a|b"),
    ])
    def test_the_refusal_names_the_headless_run_of_what_was_asked(self, tmp_path, args, headless):
        """`promptdesk --collaborate GOAL` from a script is told the headless collaboration (it was told
        `promptdesk --batch SCENE`, which plays no collaboration), and a scene the headless run of it."""
        (tmp_path / "my scene.yaml").write_text((ROOT / "scenes" / "the-apology.yaml").read_text())
        done = promptdesk(*args, cwd=tmp_path)
        assert done.returncode == 2 and "the console needs a terminal" in done.stderr
        assert f"for a headless run use --batch: {headless}" in done.stderr, done.stderr

    def test_the_refusal_names_the_stream_that_is_not_a_terminal(self, tmp_path):
        """Run from a terminal with its output piped (`promptdesk | less`): stdout alone is named."""
        import pty
        import os
        keyboard, terminal = pty.openpty()
        try:
            started = time.monotonic()
            done = subprocess.run([sys.executable, "-m", "promptdesk"], cwd=tmp_path, stdin=terminal,
                                  capture_output=True, text=True, timeout=5)
        finally:
            os.close(keyboard)
            os.close(terminal)
        assert time.monotonic() - started < 5 and done.returncode == 2
        assert "the console needs a terminal (stdout is not one here)" in done.stderr, done.stderr

    @staticmethod
    def on_a_terminal(args: tuple[str, ...], cwd: Path, env: dict[str, str] | None = None,
                      stderr: object = None) -> tuple[int, str, float]:
        """`python -m promptdesk ARGS` with stdin, stdout and (unless `stderr` is given) stderr on a
        pseudo-terminal; its exit code, what it wrote there, and how long it took."""
        import pty
        keyboard, terminal = pty.openpty()
        try:
            started = time.monotonic()
            done = subprocess.run([sys.executable, "-m", "promptdesk", *args], cwd=cwd, stdin=terminal, stdout=terminal,
                                  stderr=terminal if stderr is None else stderr, env=env, timeout=20)
            took = time.monotonic() - started
            os.set_blocking(keyboard, False)
            shown = b""
            while True:
                try:
                    chunk = os.read(keyboard, 65536)
                except OSError:  # nothing more (EAGAIN), or the terminal's other end closed (EIO)
                    break
                if not chunk:
                    break
                shown += chunk
        finally:
            os.close(keyboard)
            os.close(terminal)
        return done.returncode, shown.decode("utf-8", "backslashreplace").replace("\r\n", "\n"), took

    @pytest.mark.parametrize("args", [("the-apology",), ("compare", "run", "--tui")])
    def test_a_terminal_that_does_not_take_utf8_is_refused_at_once_with_what_to_do(self, tmp_path, args):
        """An ASCII (or Latin-1) locale with Python's UTF-8 mode off: the console drew every frame and bar as
        escapes (`\\u2594` a cell), its layout torn; it is refused, naming the encoding and the fix."""
        if args[0] == "compare":
            assert main(["--batch", "the-apology", *PLAY, "--max-beats", "2", "--out", str(tmp_path / "run")]) == 0
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "LANG", "LC_CTYPE")}
        env.update(LC_ALL="C", PYTHONUTF8="0", PYTHONCOERCECLOCALE="0", TERM="xterm-256color")
        code, said, took = self.on_a_terminal(args, tmp_path, env)
        assert took < 10 and code == 2, said[-800:]
        said = " ".join(said.split())
        assert said.startswith("INVALID_CONFIG: the console draws in Unicode, and this terminal's encoding is ascii "
                               "(LC_ALL=C): run it in a UTF-8 locale (LANG=C.UTF-8 promptdesk ..., or PYTHONUTF8=1); "), said
        assert ("promptdesk --batch the-apology" if args[0] != "compare" else "without --tui the comparison is printed") in said

    def test_a_dumb_terminal_is_refused_at_once_with_what_to_do(self, tmp_path):
        """`TERM=dumb` (Emacs's shell, a compile buffer) shows every cursor move as text: the console filled
        it with escape sequences."""
        code, said, took = self.on_a_terminal(("the-apology",), tmp_path, {**os.environ, "TERM": "dumb"})
        said = " ".join(said.split())
        assert took < 10 and code == 2, said[-800:]
        assert said.startswith("INVALID_CONFIG: the console needs a terminal that moves its cursor, and TERM=dumb says "
                               "this one cannot: run it in a terminal emulator"), said
        assert "promptdesk --batch the-apology" in said and "\x1b[" not in said

    def test_the_console_with_stderr_sent_to_a_file_is_refused_never_drawn_there(self, tmp_path):
        """`promptdesk 2> errors.log` at a terminal: the console drew itself into the file (Textual draws on
        stderr) and the terminal stayed blank while it ran."""
        with open(tmp_path / "errors.log", "wb") as log:
            code, shown, took = self.on_a_terminal(("the-apology",), tmp_path, stderr=log)
        said = (tmp_path / "errors.log").read_text(encoding="utf-8")
        assert took < 10 and code == 2, (shown[-500:], said[-500:])
        assert said.startswith("INVALID_CONFIG: the console draws on stderr, which is not a terminal here (sent "
                               "elsewhere with 2>): leave stderr on the terminal"), said
        assert "\x1b[" not in said and "promptdesk --batch the-apology" in said
        assert "INVALID_CONFIG: the console draws on stderr" in " ".join(shown.split())  # and seen (2>/dev/null too)

    @pytest.mark.skipif(not __import__("shutil").which("timeout"), reason="needs coreutils' timeout")
    def test_the_console_out_of_the_terminals_foreground_is_refused_at_once(self, tmp_path):
        """`timeout 600 promptdesk` at a prompt: timeout runs it in a process group of its own, which the
        terminal stops the moment the console sets it up; it sat blank until killed (here at 20 s, 124)."""
        import fcntl
        import pty
        import shlex
        import termios
        keyboard, terminal = pty.openpty()

        def own_terminal() -> None:  # a shell's session, the pty its controlling terminal, sh in its foreground
            os.setsid()
            fcntl.ioctl(terminal, termios.TIOCSCTTY, 0)

        line = "timeout 20 " + shlex.join([sys.executable, "-m", "promptdesk", "the-apology"])
        try:
            started = time.monotonic()
            done = subprocess.run(["sh", "-c", line], cwd=tmp_path, stdin=terminal, stdout=terminal,
                                  stderr=subprocess.PIPE, text=True, preexec_fn=own_terminal, timeout=40)
        finally:
            os.close(keyboard)
            os.close(terminal)
        assert done.returncode == 2 and time.monotonic() - started < 10, (done.returncode, done.stderr[-800:])
        assert done.stderr.startswith("INVALID_CONFIG: the console is not in the terminal's foreground (started with "
                                      "`&`, or under `timeout` without --foreground)"), done.stderr
        assert "timeout --foreground SECONDS promptdesk" in done.stderr and "promptdesk --batch the-apology" in done.stderr

    def test_a_replay_without_a_terminal_points_at_what_reads_a_run_without_the_console(self, tmp_path):
        (tmp_path / "runs" / "my run").mkdir(parents=True)
        (tmp_path / "runs" / "my run" / "events.jsonl").write_text("")
        done = promptdesk("replay", "runs/my run", cwd=tmp_path)
        assert done.returncode == 2
        assert "(stdin and stdout are not one here)" in done.stderr
        assert "promptdesk metrics 'runs/my run', or its transcript.md" in done.stderr, done.stderr

    @pytest.mark.parametrize("where", ["runs/nosuch", "runs", "runs/a\x1b[2Jb"])
    def test_a_replay_of_no_run_names_that_first_never_a_command_that_would_fail_on_it(self, tmp_path, where):
        """Without a terminal, `replay` of a folder that is no run says so (as with one), rather than
        pointing at `promptdesk metrics` of it, which would fail the same way."""
        (tmp_path / "runs").mkdir()
        done = promptdesk("replay", where, cwd=tmp_path)
        assert done.returncode == 2
        shown = where.replace("\x1b", "\\x1b")
        assert f"INVALID_CONFIG: {shown} is not a run folder (no events.jsonl in it)" in done.stderr, done.stderr
        assert "promptdesk metrics" not in done.stderr and "\x1b" not in done.stderr

    @pytest.mark.parametrize("args", [("--version",), ("schema", "scene"), ("paths",), ("--help",),
                                      ("audit", "--help"), ("import", "sotopia", "--help")])
    def test_output_to_a_full_disk_is_said_in_a_line_never_a_traceback(self, tmp_path, args):
        """`promptdesk schema scene > scene.schema.json` on a full disk (here /dev/full): exit 1 with what
        could not be written and why, not a Python traceback. A help so lost is said too (argparse passes
        over a failed write: it exited 0 having printed nothing)."""
        with open("/dev/full", "w") as full:
            done = subprocess.run([sys.executable, "-m", "promptdesk", *args], cwd=tmp_path, stdin=subprocess.DEVNULL,
                                  stdout=full, stderr=subprocess.PIPE, text=True, timeout=30)
        assert done.returncode == 1, done.stderr
        assert "Traceback" not in done.stderr and done.stderr.startswith("RECORDING_ERROR: could not write the output: ")

    @pytest.mark.parametrize("args", [("init", "{long}"), ("paths", "{long}"), ("metrics", "{long}"), ("audit", "{long}"),
                                      ("--batch", "{long}"), ("{long}",), ("replay", "{long}"),
                                      ("--batch", "the-apology", *PLAY, "--journals", "{long}"),
                                      ("--batch", "the-apology", "--characters-dir", "{long}")])
    def test_a_name_too_long_for_the_file_system_is_refused_naming_it(self, tmp_path, args):
        """200 Cyrillic letters are 400 bytes, past the 255 a file name may hold: `init`, `paths`,
        `metrics`, `audit`, the console, `--batch` and its folders ended in an OSError traceback (exit 1)."""
        long = "ж" * 200
        done = promptdesk(*(arg.format(long=long) for arg in args), cwd=tmp_path)
        assert done.returncode == 2, done.stderr[-600:]
        assert "Traceback" not in done.stderr
        assert done.stderr.startswith(f"INVALID_CONFIG: the name '{'ж' * 60}…' is too long for the file system "
                                      "(400 bytes; most take a name of at most 255 bytes): give a shorter one"), done.stderr

    @pytest.mark.parametrize("args", [("paths",), ("--batch", "the-apology", *PLAY), ("the-apology",),
                                      ("sweep", "the-apology", "--isolation", "b", "--coordinator", "C", "--seeds", "1")])
    def test_a_working_folder_deleted_under_the_shell_is_named_never_a_traceback(self, tmp_path, args):
        """`rm -rf` of the folder a shell is in, then a command there: a FileNotFoundError traceback (exit
        1) from the first look at the working folder."""
        import shlex
        gone = tmp_path / "gone"
        gone.mkdir()
        line = f"cd {shlex.quote(str(gone))} && rmdir {shlex.quote(str(gone))} && exec " + shlex.join(
            [sys.executable, "-m", "promptdesk", *args])
        done = subprocess.run(["sh", "-c", line], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
        assert done.returncode == 2, done.stderr[-800:]
        assert "Traceback" not in done.stderr
        assert done.stderr.startswith("INVALID_CONFIG: the working folder no longer exists"), done.stderr

    def test_compare_tui_without_a_terminal_is_refused(self, tmp_path):
        assert main(["--batch", "the-apology", *PLAY, "--max-beats", "2", "--out", str(tmp_path / "run")]) == 0
        done = promptdesk("compare", "run", "--tui", cwd=tmp_path)
        assert done.returncode == 2 and "the console needs a terminal" in done.stderr
        assert "without --tui the comparison is printed" in done.stderr


class TestHelp:
    def test_every_command_help_exits_0_and_ends_with_its_exit_codes(self, capsys):
        for argv in [["--help"], *([name, "--help"] for name in COMMANDS if name != "replay"),
                     ["sweep", "--branch-from", "RUN", "--help"]]:
            assert main(argv) == 0, argv
            text = capsys.readouterr().out
            assert text.rstrip().splitlines()[-1].startswith("Exit codes: 0 "), (argv, text[-300:])
            assert "; 2 " in text.rstrip().splitlines()[-1], argv

    def test_every_help_prints_on_a_terminal_that_cannot_show_every_character(self, tmp_path):
        """An ASCII (or Latin-1) stdout: `×`, `−` and `—` are written as escapes, never a traceback."""
        code = ("import sys\nfrom promptdesk.core.cli.main import COMMANDS, main\n"
                "argvs = [['--help'], *([n, '--help'] for n in COMMANDS if n != 'replay'), "
                "['sweep', '--branch-from', 'RUN', '--help'], ['import', 'sotopia', '--help']]\n"
                "print([a for a in argvs if main(a) != 0], file=sys.stderr)\n")
        done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                              env={**os.environ, "PYTHONIOENCODING": "ascii"})
        assert done.returncode == 0 and done.stderr.splitlines()[-1] == "[]", done.stderr[-2000:]
        assert "Traceback" not in done.stderr and "\\xd7" in done.stdout and "Exit codes: 0 " in done.stdout
        schema = subprocess.run([sys.executable, "-m", "promptdesk", "schema", "scene"], cwd=tmp_path,
                                capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONIOENCODING": "ascii"})
        assert schema.returncode == 0 and json.loads(schema.stdout)["properties"], schema.stderr[-2000:]

    def test_the_main_help_lists_every_command(self, capsys):
        main(["--help"])
        text = capsys.readouterr().out
        assert all(f"  {name} " in text for name in COMMANDS)

    @pytest.mark.parametrize("flag", ["--version", "-V"])
    def test_the_version_comes_from_the_package_metadata(self, capsys, flag):
        assert main([flag]) == 0
        assert capsys.readouterr().out == f"promptdesk {version('promptdesk')}\n"

    def test_the_version_imports_nothing_heavy(self, tmp_path):
        code = ("import sys\nfrom promptdesk.core.cli.main import main\nmain(['--version'])\n"
                "print(sorted(m for m in ('pydantic', 'yaml', 'textual', 'anthropic', 'openai') if m in sys.modules))")
        done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=30)
        assert done.stdout.splitlines()[-1] == "[]", done.stdout + done.stderr

    def test_sweep_takes_every_provider_flag_batch_does_and_names_branch_from(self):
        def provider_flags(p):
            group = next(g for g in p._action_groups if g.title == "provider")
            return {s for a in group._group_actions for s in a.option_strings}
        from promptdesk.core.cli import sweep
        batch, swept = provider_flags(cli.parser()), provider_flags(sweep.parser())
        assert batch == swept and {"--provider", "--model", "--base-url", "--protocol", "--timeout"} <= swept
        assert "claude-code" in next(a for a in sweep.parser()._actions if "--provider" in a.option_strings).choices
        assert "--branch-from" in sweep.parser().format_help()


class TestDidYouMean:
    @pytest.mark.parametrize("typed, close", [("audti", "audit"), ("the-apolgy", "the-apology"),
                                              ("sweeep", "sweep"), ("version", "--version")])
    def test_a_word_that_is_neither_a_command_nor_a_scene_gets_the_closest_names(self, tmp_path, monkeypatch,
                                                                                   capsys, typed, close):
        monkeypatch.chdir(tmp_path)
        assert main([typed]) == 2
        err = capsys.readouterr().err
        assert f"Did you mean: " in err and close in err.split("Did you mean: ", 1)[1].split("?")[0], err

    @pytest.mark.parametrize("typed, close", [("auditt", "audit"), ("metric", "metrics"), ("sweeep", "sweep")])
    def test_a_mistyped_command_with_its_arguments_gets_the_closest_names(self, tmp_path, monkeypatch, capsys,
                                                                          typed, close):
        monkeypatch.chdir(tmp_path)
        assert main([typed, "runs/x", "--json"]) == 2
        err = capsys.readouterr().err
        assert "Did you mean: " in err and close in err.split("Did you mean: ", 1)[1].split("?")[0], err
        assert "one scene at most" not in err

    @pytest.mark.parametrize("argv, typed, close", [
        (["--bach", "the-apology"], "--bach", "--batch"),
        (["--batch", "the-apology", "--isolaton", "b"], "--isolaton", "--isolation"),
        (["metrics", "runs/x", "--jsno"], "--jsno", "--json"),
        (["sweep", "x", "--isolation", "a", "--coordinator", "C", "--seeds", "1", "--concurency", "2"], "--concurency",
         "--concurrency"),
        (["-v"], "-v", "-V"),  # one dash: the common `-v` for the version, a long flag with one dash
        (["-version"], "-version", "--version"),
        (["metrics", "runs/x", "-json"], "-json", "--json")])
    def test_a_mistyped_flag_gets_the_closest_flags_the_command_takes(self, tmp_path, monkeypatch, capsys, argv,
                                                                      typed, close):
        monkeypatch.chdir(tmp_path)
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"unrecognized arguments: {typed}" in err and f"(did you mean {close}" in err, err

    def test_a_name_both_in_scenes_and_among_the_examples_is_offered_once(self, tmp_path, monkeypatch, capsys):
        """After `promptdesk init .`, ./scenes/ holds the examples' names too: "Did you mean: the-apology,
        the-apology?" named it twice."""
        monkeypatch.chdir(tmp_path)
        assert main(["init"]) == 0
        capsys.readouterr()
        assert main(["--batch", "the-apolgy", *PLAY]) == 2
        offered = capsys.readouterr().err.split("Did you mean: ", 1)[1].split("?")[0].split(", ")
        assert offered.count("the-apology") == 1, offered

    def test_two_scenes_that_exist_are_refused_as_two_scenes(self, tmp_path, monkeypatch, capsys):
        monkeypatch.chdir(tmp_path)
        assert main(["the-apology", "fairy-tale"]) == 2
        assert "one scene at most, got 2" in capsys.readouterr().err

    def test_an_unknown_scene_for_batch_lists_both_places_and_the_examples(self, tmp_path, monkeypatch, capsys):
        monkeypatch.chdir(tmp_path)
        (tmp_path / "scenes").mkdir()
        (tmp_path / "scenes" / "mine.yaml").write_text("name: mine\ncharacters: [alice]\n")
        assert main(["--batch", "kitchen", *PLAY]) == 2
        err = capsys.readouterr().err
        assert "./scenes/kitchen.yaml" in err and "mine" in err
        assert all(name in err for name in resources.example_scenes())


class TestScenesByName:
    def test_a_shipped_example_plays_by_name_from_an_empty_folder(self, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        monkeypatch.delenv("PROMPTDESK_JOURNAL_STORE", raising=False)
        assert main(["--batch", "the-apology", *PLAY]) == 0
        runs = list((tmp_path / "runs").iterdir())
        assert len(runs) == 1 and runs[0].name.startswith("the-apology-")
        assert main(["audit", str(runs[0])]) == 0
        kept = sorted(p.name for p in (tmp_path / ".promptdesk" / "journals").iterdir())
        assert [name for name in kept if not name.endswith(".owner")] == ["alice.md", "bob.md", "charlie.md"], \
            "an example's journals are kept in the working folder"
        assert [name for name in kept if name.endswith(".owner")] == ["alice.md.owner", "bob.md.owner", "charlie.md.owner"]

    def test_a_scene_in_scenes_is_found_by_name_before_an_example(self, tmp_path, monkeypatch, capsys):
        monkeypatch.chdir(tmp_path)
        (tmp_path / "scenes").mkdir()
        (tmp_path / "scenes" / "the-apology.yaml").write_text("name: mine\nprompt: Two old friends.\ncharacters: [ann, ben]\n")
        assert main(["--batch", "the-apology", *PLAY]) == 2
        assert "ann" in capsys.readouterr().err, "./scenes/the-apology.yaml was read, not the example"

    def test_a_missing_path_named_like_an_example_points_at_the_example_and_init(self, tmp_path, monkeypatch, capsys):
        """`scenes/morning-kitchen.yaml` copied from a page, in a folder `init` never made: the refusal
        says that the example of that name plays by name, and how to get the file."""
        monkeypatch.chdir(tmp_path)
        assert main(["--batch", "scenes/morning-kitchen.yaml", *PLAY]) == 2
        err = capsys.readouterr().err
        assert "no scene file scenes/morning-kitchen.yaml" in err
        assert "`morning-kitchen` is an example Promptdesk ships" in err and "promptdesk init" in err
        assert main(["--batch", "scenes/no-such-scene.yaml", *PLAY]) == 2
        assert "example" not in capsys.readouterr().err, "no example is claimed for a name none has"

    def test_characters_and_strategies_beside_a_scene_file_are_found(self, tmp_path, monkeypatch):
        project = tmp_path / "project"
        assert main(["init", str(project)]) == 0
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        monkeypatch.chdir(elsewhere)
        (project / "strategies" / "quick.yaml").write_text((project / "strategies" / "free.yaml").read_text()
                                                           .replace("name: free", "name: quick"))
        scene = project / "scenes" / "roundtable-free.yaml"
        scene.write_text(scene.read_text().replace("strategy: free", "strategy: quick").replace("sam-reed", "sam-own"))
        (project / "characters" / "sam-reed").rename(project / "characters" / "sam-own")
        (project / "scenes" / "the-apology.yaml").write_text(
            (project / "scenes" / "the-apology.yaml").read_text().replace("charlie", "sam-own"))
        assert main(["--batch", str(project / "scenes" / "the-apology.yaml"), *PLAY, "--journals", "none"]) == 0
        assert main(["--batch", str(scene), *PLAY, "--journals", "none"]) == 0
        notes = (next((elsewhere / "runs").glob("roundtable-free-*")) / "notes.md").read_text()
        assert "strategy quick" in notes, "the strategy beside the scene's folder was used"


class TestInit:
    def test_init_writes_a_folder_whose_scene_plays(self, tmp_path, monkeypatch):
        assert main(["init", str(tmp_path / "stage")]) == 0
        stage = tmp_path / "stage"
        assert (stage / "README.md").is_file() and (stage / "strategies" / "debate.yaml").is_file()
        assert {p.name for p in (stage / "scenes").iterdir()} == {f"{n}.yaml" for n in resources.example_scenes()} | \
            {"scene.schema.json"}, "the scenes, and the schema their first line names"
        assert not list(stage.rglob(".promptdesk-examples")), "the copied characters are the operator's own"
        monkeypatch.chdir(stage)
        assert main(["--batch", "scenes/the-apology.yaml", *PLAY]) == 0
        assert (stage / "characters" / "bob" / "journal.md").is_file(), "an owned character keeps its journal"

    def test_init_over_existing_files_lists_them_and_writes_nothing(self, tmp_path, capsys):
        (tmp_path / "scenes").mkdir()
        (tmp_path / "scenes" / "the-apology.yaml").write_text("mine\n")
        (tmp_path / "README.md").write_text("mine\n")
        before = sorted(p for p in tmp_path.rglob("*"))
        assert main(["init", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert "the-apology.yaml" in err and "README.md" in err and "writes nothing" in err
        assert sorted(p for p in tmp_path.rglob("*")) == before
        assert (tmp_path / "README.md").read_text() == "mine\n"

    def test_init_says_the_next_command_as_it_can_be_pasted(self, tmp_path, monkeypatch, capsys):
        monkeypatch.chdir(tmp_path)
        assert main(["init", "my stage's ü"]) == 0
        assert capsys.readouterr().err.splitlines()[-1] == """Next: cd 'my stage'"'"'s ü' && promptdesk"""
        assert main(["init", "--", "-stage"]) == 0  # `cd -stage` would read as cd's options
        assert capsys.readouterr().err.splitlines()[-1] == "Next: cd ./-stage && promptdesk"
        (tmp_path / "here").mkdir()
        monkeypatch.chdir(tmp_path / "here")
        assert main(["init"]) == 0
        assert capsys.readouterr().err.splitlines()[-1] == "Next: promptdesk", "no `cd .` into where you are"

    def test_init_where_a_file_stands_for_one_of_its_folders_names_that_file(self, tmp_path, capsys):
        (tmp_path / "scenes").write_text("my notes\n")
        assert main(["init", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert f"{tmp_path / 'scenes'} (a file, where init writes a folder)" in err and "writes nothing" in err, err
        assert sorted(p.name for p in tmp_path.iterdir()) == ["scenes"]

    def test_init_into_a_file_is_refused(self, tmp_path, capsys):
        (tmp_path / "f").write_text("")
        assert main(["init", str(tmp_path / "f")]) == 2
        assert "is a file" in capsys.readouterr().err


class TestPaths:
    def test_paths_names_every_place_in_the_order_searched(self, tmp_path, monkeypatch, capsys):
        monkeypatch.chdir(tmp_path)
        assert main(["paths"]) == 0
        out = capsys.readouterr().out
        chars = out.split("Characters, first found wins:\n", 1)[1].split("\n\n", 1)[0].splitlines()
        assert chars[0].startswith("1. ./characters") and chars[1].startswith("2. ./.claude/agents")
        assert "Runs:     ./runs/" in out and "Sweeps:   ./sweeps/" in out and "Journals:" in out
        assert all(name in out for name in resources.example_scenes())

    def test_paths_of_a_scene_adds_its_own_folders_and_journal_store(self, tmp_path, monkeypatch, capsys):
        main(["init", str(tmp_path / "p")])
        monkeypatch.chdir(tmp_path)
        assert main(["paths", "p/scenes/the-apology.yaml", "--journals", "mem"]) == 0
        out = capsys.readouterr().out
        assert "./p/characters" in out and "./p/strategies" in out
        assert "Journals: ./mem/<character>.md, for every character" in out

    def test_paths_of_a_roundtable_lists_its_strategies_dirs_first_as_the_run_searches_them(self, tmp_path, monkeypatch,
                                                                                            capsys):
        monkeypatch.chdir(tmp_path)
        (tmp_path / "table.yaml").write_text("name: table\nformat: roundtable\ncharacters: [a, b]\n"
                                             "roundtable: {topic: t, strategies_dirs: [team/strategies]}\n")
        assert main(["paths", "table.yaml"]) == 0
        out = capsys.readouterr().out
        places = out.split("Strategies, first found wins:\n", 1)[1].split("\n\n", 1)[0].splitlines()
        assert places[0].startswith("1. ./team/strategies") and places[1].startswith("2. ./strategies")


class TestDamagedInstall:
    @pytest.fixture
    def damaged(self, tmp_path, monkeypatch):
        """Promptdesk's package folder without its shipped files."""
        empty = tmp_path / "site" / "promptdesk"
        empty.mkdir(parents=True)
        monkeypatch.setattr(resources, "root", lambda: empty)
        monkeypatch.chdir(tmp_path)

    def test_a_missing_shipped_file_exits_2_naming_it(self, damaged, capsys):
        assert main(["--batch", "the-apology", *PLAY]) == 2
        err = capsys.readouterr().err
        assert "scenes is missing" in err and "reinstall promptdesk" in err
        assert "uv tool upgrade --reinstall promptdesk" in err, "uv reinstalls from its receipt, not from PyPI"
        assert not INSTALL_BY_NAME.search(err), "`promptdesk` on PyPI is another project"

    def test_the_console_is_refused_before_it_opens_without_its_themes(self, damaged, capsys):
        from promptdesk.tui.launch import Console

        with pytest.raises(resources.MissingResource, match="themes/dark.tcss is missing"):
            Console().open(cli.parser().parse_args([]))


def test_python_dash_m_promptdesk_is_the_command(tmp_path):
    done = promptdesk("--version", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("promptdesk ")
    assert Path(__file__).resolve().parents[1] == ROOT


class TestNotFoundSaysWhereItLooked:
    @pytest.mark.parametrize("given, scenes_entry", [("kitchen.yaml", "./scenes/kitchen.yaml"),
                                                     ("kitchen", "./scenes/kitchen.yaml"),
                                                     ("out/scenes/kitchen.yaml", None)])
    def test_the_places_named_are_the_places_searched(self, tmp_path, monkeypatch, capsys, given, scenes_entry):
        monkeypatch.chdir(tmp_path)
        assert main(["--batch", given, *PLAY]) == 2
        err = capsys.readouterr().err
        assert ".yaml.yaml" not in err
        if scenes_entry:
            assert scenes_entry in err
        else:
            assert "./scenes/" not in err and "examples shipped" not in err and "out/scenes/kitchen.yaml" in err

    def test_a_mistyped_path_gets_the_closest_files_of_its_folder(self, tmp_path, monkeypatch, capsys):
        monkeypatch.chdir(tmp_path)
        (tmp_path / "stage").mkdir()
        (tmp_path / "stage" / "kitchen.yaml").write_text("name: kitchen\ncharacters: [a, b]\n")
        assert main(["--batch", "stage/kitchn.yaml", *PLAY]) == 2
        assert "Did you mean: stage/kitchen.yaml?" in capsys.readouterr().err


class TestCharactersDir:
    @pytest.mark.parametrize("command", [["--batch", "the-apology", *PLAY], ["paths", "the-apology"],
                                         ["sweep", "the-apology", "--isolation", "a", "--coordinator", "C",
                                          "--seeds", "1", "--provider", "offline", "--out", "swept"]])
    def test_a_characters_dir_that_is_no_folder_is_refused_not_passed_over(self, tmp_path, monkeypatch, capsys,
                                                                           command):
        monkeypatch.chdir(tmp_path)
        (tmp_path / "notes.txt").write_text("x")
        for given in ("my-charcters", "notes.txt"):
            assert main([*command, "--characters-dir", given]) == 2
            err = capsys.readouterr().err
            assert "--characters-dir" in err and given in err and "not a folder" in err
        assert not (tmp_path / "runs").exists() and not (tmp_path / "swept").exists()


class TestAFolderYouMayNotRead:
    """Someone else's run folder (runs are 0700): every command names the file it may not read and
    exits 2, never a traceback. The system's answer is emulated for paths inside the folder, since the
    suite may run as root, whom no permission stops."""

    @pytest.fixture
    def locked(self, tmp_path, monkeypatch):
        import builtins
        import errno
        import io

        assert main(["--batch", str(ROOT / "scenes" / "the-apology.yaml"), *PLAY, "--journals", "none",
                     "--out", str(tmp_path / "theirs")]) == 0
        folder = str(tmp_path / "theirs")

        def inside(path, listing=False) -> bool:
            text = os.fsdecode(os.path.abspath(path)) if isinstance(path, (str, bytes, os.PathLike)) else ""
            return text.startswith(folder + os.sep) or (listing and text == folder)

        def deny(real, listing=False):
            def call(path, *args, **kwargs):
                if inside(path, listing):
                    raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
                return real(path, *args, **kwargs)
            return call

        for owner, name in ((os, "stat"), (os, "lstat"), (os, "open"), (io, "open"), (builtins, "open")):
            monkeypatch.setattr(owner, name, deny(getattr(owner, name)))
        for name in ("scandir", "listdir"):
            monkeypatch.setattr(os, name, deny(getattr(os, name), listing=True))
        monkeypatch.chdir(tmp_path)
        return "theirs"

    @pytest.mark.parametrize("argv", [["metrics"], ["audit"], ["report", "--html", "page.html"], ["compare", "theirs"],
                                      ["evaluate"], ["sweep", "--branch-from", "--at-beat", "1", "--event", "x",
                                                     "--seeds", "1"], ["rebuild"], ["branch", "--at-beat", "1"]])
    def test_a_command_on_a_folder_you_may_not_read_names_the_file_and_exits_2(self, locked, capsys, argv):
        at = argv.index("--branch-from") + 1 if "--branch-from" in argv else 1
        assert main([*argv[:at], locked, *argv[at:]]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and "Permission denied" in err and "theirs" in err, err


class TestStreams:
    @pytest.mark.parametrize("args", [("the-apology", "--isolation", "b", "--coordinator", "C", "--seeds", "1-2"),
                                      ("--branch-from", "parent", "--at-beat", "1", "--note", "Say it", "--seeds", "1")])
    def test_a_sweep_with_stderr_closed_runs_all_the_same(self, tmp_path, args):
        """`promptdesk sweep ... 2>&-` (a job started without a stderr): the progress asked a stream that was
        not there whether it was a terminal, and the sweep ended at once, exit 1, silently, nothing run."""
        import shlex
        assert main(["--batch", "the-apology", *PLAY, "--max-beats", "2", "--out", str(tmp_path / "parent")]) == 0
        line = shlex.join([sys.executable, "-m", "promptdesk", "sweep", *args, "--out", "swept"]) + " 2>&-"
        done = subprocess.run(["sh", "-c", line], cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stdout[-800:]
        rows = (tmp_path / "swept" / "results.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(rows) == 2, rows  # two seeds; or a retake and a take with the change

    @pytest.mark.parametrize("args", [("the-apology", "--isolation", "b", "--coordinator", "C", "--seeds", "1-3"),
                                      ("--branch-from", "parent", "--at-beat", "1", "--note", "Say it", "--seeds", "1-2")])
    def test_a_sweep_whose_reader_went_away_runs_to_its_end(self, tmp_path, args):
        """`promptdesk sweep ... 2>&1 | head -1`: the progress's write to the closed pipe raised, and the sweep
        stopped after its first run, exit 1 (a batch run only goes quiet, as the headless guide says)."""
        assert main(["--batch", "the-apology", *PLAY, "--max-beats", "2", "--out", str(tmp_path / "parent")]) == 0
        reader, writer = os.pipe()
        os.close(reader)  # the reader left before the first line
        try:
            done = subprocess.run([sys.executable, "-m", "promptdesk", "sweep", *args, "--out", "swept"], cwd=tmp_path,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=writer, timeout=120)
        finally:
            os.close(writer)
        assert done.returncode == 0
        rows = (tmp_path / "swept" / "results.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(rows) == (3 if args[0] == "the-apology" else 4), rows

    def test_a_dumb_terminal_gets_the_progress_as_plain_lines(self, monkeypatch):
        """`TERM=dumb` (Emacs's shell, a compile buffer) shows cursor movements as text: the bars were
        redrawn there with `\\x1b[3F\\x1b[J` between them."""
        import io

        from promptdesk.core.experiments.progress import Progress

        class Terminal(io.StringIO):
            def isatty(self) -> bool:
                return True

        monkeypatch.setenv("TERM", "xterm-256color")
        assert Progress(Terminal()).tty
        monkeypatch.setenv("TERM", "dumb")
        assert not Progress(Terminal()).tty
