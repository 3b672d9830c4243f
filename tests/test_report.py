"""`promptdesk report`: one self-contained HTML file, read back by a real headless Chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from promptdesk.core.cli.main import main
from helpers import ROOT
from test_compare import make_stats_sweep, make_sweep
from test_metrics import HAND_COUNTED, write_run

ATTACK = '<script>document.title="pwned"</script><img src=x onerror="document.body.dataset.pwned=1">'


def browser() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing: .ci/run installs it (apt-get install chromium)")
        pytest.skip("chromium is not installed here (CI installs it through .ci/run)")
    return found


def dump_dom(page: Path) -> str:
    """The DOM as Chromium built it after loading the page (scripts, had any run, included)."""
    result = subprocess.run([browser(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                             "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


class Reader(HTMLParser):
    """What a reader sees: the text outside <style>/<title>, and the elements present."""

    def __init__(self) -> None:
        super().__init__()
        self.text, self.tags, self._skip = [], [], 0

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._skip += tag in ("style", "title")

    def handle_endtag(self, tag):
        self._skip -= tag in ("style", "title")

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)


def read(dom: str) -> Reader:
    reader = Reader()
    reader.feed(dom)
    return reader


def hostile_run(tmp_path: Path) -> Path:
    records = [dict(r) for r in HAND_COUNTED]
    records[2]["text"] = f"The kettle is on the stove. {ATTACK}"
    records.insert(3, {"t": 1.5, "from": "bob", "type": "think", "text": "Bob's secret plan: <b>stall</b>", "beat": 0})
    return write_run(tmp_path / "run", records)


def test_a_run_report_shows_escaped_model_text_and_folds_thinking_in_a_real_browser(tmp_path):
    page = tmp_path / "run.html"
    assert main(["report", str(hostile_run(tmp_path)), "--html", str(page)]) == 0
    html = page.read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)          # nothing fetched from anywhere
    dom = read(dump_dom(page))
    seen = " ".join(dom.text)
    assert ATTACK.replace('"', "'") in seen              # the model's markup is shown as text (quotes folded as on stage)
    assert not any(tag in ("script", "img") for tag, _ in dom.tags)
    body = next(attrs for tag, attrs in dom.tags if tag == "body")
    assert "data-pwned" not in body
    assert "Bob's secret plan: <b>stall</b>" in seen
    details = [attrs for tag, attrs in dom.tags if tag == "details"]
    assert details and all("open" not in attrs for attrs in details)   # thinking is folded
    rects = [attrs for tag, attrs in dom.tags if tag == "rect"]
    assert len(rects) >= 6                                # a square per acted beat on the timeline (+ bars)
    assert "Timeline" in seen and "Talk share" in seen and "close_reason" in seen
    lines = re.findall(r'<p class="(line|private)"([^>]*)>', html)
    assert lines and all(attrs == ' dir="auto"' for _, attrs in lines), "each line takes the direction of its script"


def test_a_sweep_report_holds_the_comparison_and_per_condition_charts(tmp_path):
    page = tmp_path / "sweep.html"
    assert main(["report", str(make_sweep(tmp_path / "sweep")), "--html", str(page)]) == 0
    dom = read(dump_dom(page))
    seen = " ".join(dom.text)
    assert "2.5 ± 0.707 (n=2)" in seen and "beyond the" not in seen
    assert "a-C-seed1" in seen and "b-C-seed3" not in seen               # an unfinished run is not reported
    assert sum(tag == "svg" for tag, _ in dom.tags) >= 5
    folded = [attrs for tag, attrs in dom.tags if tag == "details"]
    assert len(folded) == 4 and all("open" not in attrs for attrs in folded)   # a folded timeline per run


def test_an_unfinished_sweeps_report_names_the_runs_left_out_and_one_condition_cites_no_test(tmp_path):
    import yaml
    sweep = make_sweep(tmp_path / "sweep")
    plan = yaml.safe_load((sweep / "sweep.yaml").read_text())
    (sweep / "sweep.yaml").write_text(yaml.safe_dump({**plan, "seeds": [1, 2, 3]}))
    page = tmp_path / "sweep.html"
    assert main(["report", str(sweep), "--html", str(page)]) == 0
    text = " ".join(page.read_text().split())
    assert "4 of 6 planned runs have a result; left out, with no result yet: a-C seed 3, b-C seed 3" in text
    (sweep / "sweep.yaml").write_text(yaml.safe_dump({**plan, "isolations": ["a"]}))
    (sweep / "results.jsonl").write_text('{"run": "a-C-seed1"}\n{"run": "a-C-seed2"}\n')
    assert main(["report", str(sweep), "--html", str(page)]) == 0
    text = " ".join(page.read_text().split())
    assert "One condition (a-C): nothing to compare it with" in text
    assert "across 0 tests" not in text and "Report each difference" not in text


def test_a_sweep_with_no_finished_run_is_refused_as_compare_refuses_it(tmp_path, capsys):
    """A sweep stopped (by its budget, a signal) before any run finished has nothing to report: a page
    with no title, "mixed" time and no seeds would look like a result."""
    sweep = make_sweep(tmp_path / "sweep")
    (sweep / "results.jsonl").write_text("")
    page = tmp_path / "sweep.html"
    for command in (["report", str(sweep), "--html", str(page)], ["compare", str(sweep)]):
        assert main(command) == 2
        assert "is a sweep with no finished run yet; run the sweep first" in capsys.readouterr().err
    assert not page.exists()


def test_a_sweep_report_marks_significant_differences_and_says_how_many_seeds_would_tell(tmp_path):
    from test_compare_design import SPREAD, write_sweep
    sweep = write_sweep(tmp_path / "sweep", {"a-C": [n + 1 for n in SPREAD], "b-C": SPREAD, "b-B": [n + 1 for n in SPREAD]})
    page = tmp_path / "sweep.html"
    assert main(["report", str(sweep), "--html", str(page)]) == 0
    html = page.read_text()
    marked = re.findall(r'<tr class="significant">(.*?)</tr>', html)
    cells = [re.findall(r"<td>(.*?)</td>", row) for row in marked]
    # In the comparison table, the metrics with a significant difference; in the differences table, the pairs.
    assert [c[0] for c in cells if len(c) == 4] == ["beats *", "turns *"]
    pairs = [c for c in cells if len(c) == 10]
    assert [(c[0], c[1], c[2], c[3], c[7]) for c in pairs if c[0] == "turns"] == \
        [("turns", "a-C", "b-C", "10", "0.002"), ("turns", "b-B", "b-C", "10", "0.002")]
    assert "<th>seeds for 80% power</th>" in html and "<th>p (Holm)</th>" in html and "<th>d_z (95% CI)</th>" in html
    assert "Significant at 0.05 after adjustment (*)" in html and "Paired by seed" in html
    assert "How to cite these numbers" in html and "sign-flip permutation test, paired by seed" in html


def test_a_sweep_report_says_what_was_run_in_a_real_browser(tmp_path):
    """Scene and file, provider and model per role, seeds, version, the choices in words and the labels."""
    from promptdesk import version
    from test_compare_design import SPREAD, write_sweep
    sweep = write_sweep(tmp_path / "sweep", {"a-C": SPREAD[:4], "b-C": SPREAD[:4]})
    for log in sweep.glob("*/events.jsonl"):
        records = [json.loads(line) for line in log.read_text().splitlines()]
        records[0]["scene"] = {"name": "tea", "title": "Tea at Four", "format": "scene"}
        records[0]["providers"] = {"alice": "anthropic:claude-sonnet-4-6", "bob": "openai:gpt-4o"}
        log.write_text("".join(json.dumps(r) + "\n" for r in records))
    page = tmp_path / "sweep.html"
    assert main(["report", str(sweep), "--html", str(page)]) == 0
    seen = " ".join(" ".join(read(dump_dom(page)).text).split())
    for words in ("What was run", "Tea at Four ( tea.yaml ), format scene", "Alice anthropic, model claude-sonnet-4-6",
                  "Bob openai, model gpt-4o", "Seeds 1-4", f"Promptdesk {version()}", "Isolation a sub-agent per actor",
                  "Isolation b separate API conversation per actor", "Coordinator C pure code",
                  "Judge none: coordinator C decides by rules in code",
                  "Run with promptdesk sweep tea.yaml --isolation a,b --coordinator C --seeds 1-4",
                  "This report promptdesk report", "How to cite these numbers"):
        assert words in seen, words
    assert "not a model" not in seen                      # no offline run here: nothing to disclaim
    # the labels' example is a condition the report's tables show (no coordinator B in this sweep)
    example = re.search(r"Condition labels isolation-coordinator: (\S+) is isolation (\S+) with coordinator (\S+)", seen)
    assert example and example[1] == f"{example[2]}-{example[3]}" and example[1] in {"a-C", "b-C"}, seen
    assert "a-B" not in seen


def test_an_offline_report_says_the_improviser_is_no_model_and_how_its_judge_decides(tmp_path, monkeypatch):
    shutil.copytree(ROOT / "characters", tmp_path / "characters", ignore=shutil.ignore_patterns(".promptdesk"))
    (tmp_path / "scenes").mkdir()
    shutil.copy(ROOT / "scenes" / "the-apology.yaml", tmp_path / "scenes")
    monkeypatch.chdir(tmp_path)
    assert main(["--batch", "scenes/the-apology.yaml", "--isolation", "b", "--coordinator", "B", "--seed", "3",
                 "--out", "run"]) == 0
    assert main(["report", "run", "--html", "run.html"]) == 0
    html = (tmp_path / "run.html").read_text()
    assert "The Apology (<code>the-apology.yaml</code>)" in html
    assert "judge (coordinator)</dt><dd>offline improviser (not a model)" in html
    assert "The offline improviser is not a language model" in html and "by matching words, not by understanding" in html
    assert "simulated time" in html and "Run with</dt><dd><code>promptdesk --batch the-apology.yaml --isolation b " \
        "--coordinator B --provider offline --seed 3 --max-beats 30</code>" in html
    assert re.search(r"success yes, goal achieved (yes|no)\.", html)


def chart(html: str, label: str) -> str:
    found = re.search(rf'<svg role="img" aria-label="{label}".*?</svg>', html)
    assert found, label
    return found[0]


def test_unknown_values_are_drawn_as_unknown_never_as_a_bar_of_0(tmp_path):
    sweep = make_stats_sweep(tmp_path / "sweep")
    for run in sweep.glob("b-B-seed*"):                        # b-B: the goal was never judged
        log = run / "events.jsonl"
        log.write_text(log.read_text().replace('"goal_achieved": false', '"goal_achieved": null'))
    page = tmp_path / "sweep.html"
    assert main(["report", str(sweep), "--html", str(page)]) == 0
    html = page.read_text()
    goal = chart(html, "goal_achieved")
    assert goal.count("<rect") == 2 and goal.count(">unknown</text>") == 1   # a-C (0) and b-C (1) drawn, b-B not
    assert re.search(r">b-B</text><text [^>]*>unknown</text>", goal)
    success = chart(html, "success")                          # only a-C recorded its success
    assert success.count("<rect") == 1 and success.count(">unknown</text>") == 2
    runs = [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr[^>]*>(.*?)</tr>", html)]
    assert ["b-B-seed1", "b-B", "1", "natural", "unknown", "unknown"] == next(r for r in runs if r[:1] == ["b-B-seed1"])[:6]
    assert ["a-C-seed2", "a-C", "2", "natural", "no", "no"] == next(r for r in runs if r[:1] == ["a-C-seed2"])[:6]
    assert ["b-C-seed1", "b-C", "1", "natural", "unknown", "yes"] == next(r for r in runs if r[:1] == ["b-C-seed1"])[:6]
    assert not {"True", "False", "None"} & {cell for row in runs for cell in row}


def test_report_of_a_folder_that_is_neither_exits_2(tmp_path, capsys):
    assert main(["report", str(tmp_path), "--html", str(tmp_path / "x.html")]) == 2
    assert "neither a run folder" in capsys.readouterr().err and not (tmp_path / "x.html").exists()


def test_a_run_without_cost_shows_no_cost_recorded_and_tokens_per_beat(tmp_path):
    free = [{k: v for k, v in r.items() if k != "cost_usd"} for r in HAND_COUNTED]
    pages = {}
    for name, records in (("paid", HAND_COUNTED), ("free", free)):
        pages[name] = tmp_path / f"{name}.html"
        assert main(["report", str(write_run(tmp_path / name, records)), "--html", str(pages[name])]) == 0
    paid, unpaid = pages["paid"].read_text(), pages["free"].read_text()
    assert "<h2>Cost per beat</h2>" in paid and "no cost recorded" not in paid.lower()
    assert "<h2>Cost per beat</h2>" not in unpaid and "No cost recorded" in unpaid
    tokens = chart(unpaid, re.escape("output tokens per beat (no cost recorded)"))
    heights = [float(y) for y in re.findall(r",([\d.]+)", re.search(r'points="([^"]*)"', tokens)[1])]
    assert len(set(heights)) > 1                                  # a line that moves, not an empty baseline


def test_the_journal_steps_spend_is_reported_apart_from_the_beats(tmp_path):
    from test_metrics import call
    journal = call(13.0, "alice", 4, output_tokens=500, cost_usd=0.5) | {"purpose": "journal"}
    page = tmp_path / "run.html"
    assert main(["report", str(write_run(tmp_path / "run", [*HAND_COUNTED, journal])), "--html", str(page)]) == 0
    html = page.read_text()
    assert "Journal step, after the close (in no beat): 0.5" in html
    points = re.search(r'points="([^"]*)"', chart(html, "cost per beat"))[1].split()
    assert points[-1].endswith(",38.0")                    # the last beat spent nothing: its point is on the baseline


def test_long_names_are_cut_to_fit_the_charts_with_the_whole_name_as_a_tooltip(tmp_path):
    long = "Dr. Evangeline Montgomery-Smythe, Senior Partner"
    records = [dict(r) for r in HAND_COUNTED]
    records[0] = records[0] | {"cast": {"alice": long, "bob": "Bob", "charlie": "Charlie"}}
    page = tmp_path / "run.html"
    assert main(["report", str(write_run(tmp_path / "run", records)), "--html", str(page)]) == 0
    html = page.read_text()
    for label in ("beat timeline", "talk share"):
        labels = re.findall(r'<text x="0"[^>]*><title>([^<]*)</title>([^<]*)</text>', chart(html, label))
        assert (long, "Dr. Evangeline M…") in labels and ("Bob", "Bob") in labels
        assert all(len(shown) <= 17 for _, shown in labels)


def test_sweep_charts_have_an_axis_with_units_and_keep_their_whiskers_inside(tmp_path):
    from promptdesk.core.experiments.report import CHART_WIDTH
    from test_compare_design import SPREAD, write_sweep
    sweep = write_sweep(tmp_path / "sweep", {"a-C": SPREAD, "b-C": [n * 3 for n in SPREAD]})
    page = tmp_path / "sweep.html"
    assert main(["report", str(sweep), "--html", str(page)]) == 0
    turns = chart(page.read_text(), "turns")
    assert f'viewBox="0 0 {CHART_WIDTH} ' in turns and 'width="100%"' in turns       # shrinks with the page
    assert ">speeches per run</text>" in turns and re.search(r'text-anchor="middle" fill="#374151">0</text>', turns)
    xs = [float(x) for x in re.findall(r'\bx\d?="([\d.]+)"', turns)]
    widths = [float(x) + float(w) for x, w in re.findall(r'<rect x="([\d.]+)"[^>]*width="([\d.]+)"', turns)]
    assert xs and max(xs + widths) <= CHART_WIDTH                               # bars, whiskers and labels inside
    whiskers = re.findall(r'<line x1="([\d.]+)" x2="([\d.]+)" y1="(\d+)" y2="\3" stroke="#111"/>', turns)
    assert len(whiskers) == 2 and all(float(b) <= CHART_WIDTH - 90 for _, b, _ in whiskers)


def test_a_runs_run_with_names_its_model_when_one_model_played_every_actor():
    """`--provider anthropic` alone is refused (anthropic has no default model): the command a report
    gives to play the run again names the model its cast played on, when they shared one."""
    from promptdesk.core.experiments.report_header import run_command
    from promptdesk.core.record.events import parse_event_json
    start = {"t": 0.0, "from": "coordinator", "type": "start", "text": "start", "beat": 0, "isolation": "a",
             "coordinator": "C", "seed": 3, "scene": {"name": "tea", "file": "tea.yaml"},
             "providers": {"alice": "anthropic:claude-sonnet-4-6", "bob": "anthropic:claude-sonnet-4-6"}}
    same = run_command([parse_event_json(json.dumps(start))])
    assert same == ("promptdesk --batch tea.yaml --isolation a --coordinator C --provider anthropic "
                    "--model claude-sonnet-4-6 --seed 3")
    start["providers"]["bob"] = "openai:gpt-4o"                      # a mixed cast: its scene file says who plays whom
    assert "--provider" not in run_command([parse_event_json(json.dumps(start))])
    start["providers"] = {"alice": "offline:improviser", "bob": "offline:improviser"}
    assert run_command([parse_event_json(json.dumps(start))]).endswith("--provider offline --seed 3")


def test_the_page_is_private_to_you_as_the_run_folders_files_are(tmp_path):
    """The page holds every actor's thinking: it is written 0600, and a page already there (say 0644)
    is made private as it is replaced."""
    run = write_run(tmp_path / "run", HAND_COUNTED)
    page = tmp_path / "page.html"
    page.write_text("old")
    page.chmod(0o644)
    assert main(["report", str(run), "--html", str(page)]) == 0
    assert page.stat().st_mode & 0o777 == 0o600 and "<html" in page.read_text()
    fresh = tmp_path / "fresh.html"
    assert main(["report", str(run), "--html", str(fresh)]) == 0
    assert fresh.stat().st_mode & 0o777 == 0o600


def test_a_run_cut_off_is_reported_as_never_closed_and_cut_short(tmp_path):
    """A killed run has no close: its page never says it closed, and says where its record ends."""
    run = write_run(tmp_path / "run", HAND_COUNTED[:-1])
    page = tmp_path / "page.html"
    assert main(["report", str(run), "--html", str(page)]) == 0
    html = page.read_text()
    assert "closed <b>" not in html and "<b>never closed</b>, its record stopping after 5 beats" in html
    assert "The record is cut short.</b> events.jsonl ends in beat 4 without a close" in html
    assert f"promptdesk resume {run}" in html
    whole = tmp_path / "whole.html"
    assert main(["report", str(write_run(tmp_path / "whole", HAND_COUNTED)), "--html", str(whole)]) == 0
    assert "closed <b>natural</b>" in whole.read_text() and "cut short" not in whole.read_text()


def test_escapes_control_and_direction_characters_never_reach_the_page(tmp_path):
    """A model's escape sequences, bell and C1 controls are no HTML (a parse error a browser shows as
    it likes), and a right-to-left override left open shows the rest of its paragraph reversed: the
    page keeps the words and none of them, in a speech, a thinking and a tone alike."""
    records = [dict(r) for r in HAND_COUNTED]
    records[2]["text"] = "Kettle \x1b[31mon\x1b[0m \x1b]52;c;ZXZpbA==\x07 \u202eevots\u202c \x9b2J"
    records.insert(3, {"t": 1.5, "from": "bob", "type": "think", "text": "plan \x1b[2J\u2066x\u2069 \x07", "beat": 0})
    page = tmp_path / "run.html"
    assert main(["report", str(write_run(tmp_path / "run", records)), "--html", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", html)
    assert "Kettle on evots" in html and "plan x" in html and "ZXZpbA" not in html


def test_a_sweep_of_a_shipped_example_is_run_with_its_name_never_this_machines_install_path():
    """A sweep of `the-apology` records the example's file where it is installed; the report's "Run with"
    names the example, which is the command that runs it on any machine. Another file keeps its path."""
    from types import SimpleNamespace

    from promptdesk import resources
    from promptdesk.core.experiments.report_header import sweep_command

    plan = SimpleNamespace(scene=resources.scenes_dir() / "the-apology.yaml", isolations=["a", "b"], coordinators=["C"],
                           seeds=[1, 2], scenes=None, provider=None, model=None, max_beats=None, models=[], evaluators=[])
    ran = sweep_command(plan)
    assert ran.startswith("promptdesk sweep the-apology --isolation a,b") and str(resources.scenes_dir()) not in ran
    assert sweep_command(SimpleNamespace(**{**vars(plan), "scene": Path("mine/tea.yaml")})).startswith(
        "promptdesk sweep mine/tea.yaml ")


def test_a_report_of_two_sweeps_or_a_missing_folder_is_refused_with_its_reason(tmp_path, capsys):
    """`report SWEEP SWEEP --html F` (issue 34's several sweeps, which `compare` accepts) read the sweeps as
    takes and ended in a FileNotFoundError traceback on `SWEEP/events.jsonl`."""
    from test_compare_design import write_sweep
    first = write_sweep(tmp_path / "one", {"a-C": [4, 5], "b-C": [5, 6]})
    second = write_sweep(tmp_path / "two", {"a-C": [4, 5], "b-C": [5, 6]})
    assert main(["report", str(first), str(second), "--html", str(tmp_path / "two.html")]) == 2
    err = capsys.readouterr().err
    assert f"{first} is a sweep folder" in err and "compare SWEEP SWEEP" in err
    assert main(["report", str(first / "a-C-seed1"), str(tmp_path / "nowhere"), "--html", str(tmp_path / "x.html")]) == 2
    assert "nowhere is not a run folder (no events.jsonl)" in capsys.readouterr().err
    assert not (tmp_path / "two.html").exists() and not (tmp_path / "x.html").exists()


def test_html_dash_writes_the_page_to_standard_output_and_no_file(tmp_path, capsys, monkeypatch):
    """`--html -` is standard output, as the command line's other `-` are read: it wrote a file named `-`."""
    run = write_run(tmp_path / "run", HAND_COUNTED)
    monkeypatch.chdir(tmp_path)
    assert main(["report", str(run), "--html", "-"]) == 0
    out = capsys.readouterr().out
    assert out.lstrip().lower().startswith("<!doctype html") and out.rstrip().endswith("</html>")
    assert not (tmp_path / "-").exists()
