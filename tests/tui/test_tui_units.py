"""Pure parts of the console: wrapping, transcript lines, playback, the replay state, keymaps."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.style import Style

from promptdesk.core.record.events import CallEvent, CloseEvent, GenericEvent, SpeakEvent, ThinkEvent
from promptdesk.tui.keymap import keymap_from
from promptdesk.tui.playback import Playback
from promptdesk.tui.lines import Cast, safe
from promptdesk.tui.render import transcript_line
from promptdesk.tui.stage_state import StateFold
from promptdesk.tui.wrap import count_rows, narrow, wrap_runs
from helpers import ROOT

CAST = Cast({"alice": "Alice", "bob": "Bob"})
words = st.text(alphabet=st.sampled_from("abcdefgh日 \n\t"), max_size=120)
narrow_text = st.text(alphabet=st.sampled_from("abcdef  .,→·—é■Ж\"*"), max_size=90)


def event(type_: str, t: float = 0.0, **fields) -> GenericEvent:
    return GenericEvent(t=t, **{"from": fields.pop("from_", "coordinator")}, type=type_, **fields)


class TestWrap:
    @given(words, st.integers(min_value=2, max_value=60))
    def test_no_row_is_wider_than_the_width(self, text: str, width: int) -> None:
        assert all(strip.cell_length <= width for strip in wrap_runs([(text, None)], width))

    @given(words, st.integers(min_value=2, max_value=60))
    def test_counting_rows_agrees_with_building_them(self, text: str, width: int) -> None:
        assert count_rows([(text, None)], width) == len(wrap_runs([(text, None)], width))

    @given(st.lists(st.text(alphabet="abcdefghij", min_size=1, max_size=12), max_size=30),
           st.integers(min_value=12, max_value=60))
    def test_words_that_fit_are_never_split(self, items: list[str], width: int) -> None:
        rows = [strip.text for strip in wrap_runs([(" ".join(items), None)], width)]
        assert " ".join(rows).split() == items

    @given(st.lists(narrow_text, min_size=1, max_size=5), st.integers(min_value=1, max_value=40))
    def test_the_fast_path_lays_out_exactly_as_the_general_path(self, texts: list[str], width: int) -> None:
        runs = [(text, Style(bold=i % 2 == 0)) for i, text in enumerate(texts)]
        assert all(narrow(text) for text in texts)
        fast, general = wrap_runs(runs, width), wrap_runs(runs, width, fast=False)
        assert [[(s.text, s.style) for s in strip.simplify()] for strip in fast] == \
            [[(s.text, s.style) for s in strip.simplify()] for strip in general]
        assert [strip.cell_length for strip in fast] == [strip.cell_length for strip in general]
        assert count_rows(runs, width) == len(general)

    def test_wide_zero_width_and_other_spaces_are_not_narrow(self) -> None:
        assert narrow("Alice → Bob · beat 3 — “fine”")
        for text in ("日本", "⚡ EVENT", "e\u0301", "a\u00a0b", "a\u200bb", "tab\there", "two\nlines"):
            assert not narrow(text), text

    def test_newlines_break_rows(self) -> None:
        assert [s.text for s in wrap_runs([("one\ntwo", None)], 40)] == ["one", "two"]


class TestTranscriptLines:
    def test_speech_shows_target_tone_gesture_and_words(self) -> None:
        line = transcript_line(SpeakEvent(t=0, **{"from": "alice"}, target="Bob", tone="firm",
                                          nonverbal="folds arms", text="You missed it."), CAST)
        assert line.plain == 'Alice → Bob (firm) *folds arms*  "You missed it."'
        assert line.roles[0] == "speaker-0"

    def test_interruptions_say_after_what(self) -> None:
        line = transcript_line(SpeakEvent(t=0, **{"from": "bob"}, action="interrupt", interrupt_after="I only",
                                          text="No."), CAST)
        assert line.plain.startswith('Bob interrupts after "I only"')

    def test_an_interruption_with_no_phrase_says_only_that_it_interrupts(self) -> None:
        for phrase in (None, "", "   "):
            line = transcript_line(SpeakEvent(t=0, **{"from": "bob"}, action="interrupt", interrupt_after=phrase,
                                              text="No."), CAST)
            assert line.plain == 'Bob interrupts  "No."', phrase

    def test_thinking_routing_and_calls_are_not_transcribed(self) -> None:
        assert transcript_line(ThinkEvent(t=0, **{"from": "alice"}, text="secret"), CAST) is None
        assert transcript_line(event("route", text="Forwarding"), CAST) is None
        assert transcript_line(CallEvent(t=0, **{"from": "coordinator"}, provider="offline"), CAST) is None

    def test_world_events_say_who_threw_them(self) -> None:
        assert transcript_line(event("event", text="Rain", from_="operator"), CAST).plain == "⚡ EVENT (from you): Rain"

    def test_an_evaluation_after_the_close_shows_its_scores(self) -> None:
        scored = event("evaluation", from_="evaluator", target="alice", rubric="sotopia",
                       text="SOTOPIA-EVAL by openai:gpt-5 for Alice: goal 7, secret \x1b[2J-2")
        assert transcript_line(scored, CAST).plain == "★ SOTOPIA-EVAL by openai:gpt-5 for Alice: goal 7, secret -2"

    def test_control_sequences_are_stripped(self) -> None:
        assert safe("a\x1b[2Jb\x1b]52;c;SGVsbG8=\x07c\x85d\x00") == "abcd"


class TestPlayback:
    def events(self) -> list:
        return [event("start", 0.0), event("beat", 0.0, beat=0, text="Beat 0"),
                SpeakEvent(t=1.0, **{"from": "alice"}, text="Hi", beat=0), event("beat", 2.0, beat=1, text="Beat 1"),
                SpeakEvent(t=3.0, **{"from": "bob"}, text="Hello", beat=1),
                CloseEvent(t=4.0, **{"from": "coordinator"}, reason="natural")]

    def test_plays_by_t_at_the_chosen_speed(self) -> None:
        playback = Playback(self.events())
        playback.toggle()
        assert [e.type for e in playback.tick(1.0).events] == ["start", "beat", "speak"]
        playback.cycle_speed()
        assert playback.speed == 4.0
        assert [e.type for e in playback.tick(1.0).events] == ["beat", "speak", "close"]
        assert playback.done and not playback.playing

    def test_steps_by_event_and_by_beat(self) -> None:
        playback = Playback(self.events())
        assert [e.type for e in playback.step_event().events] == ["start"]
        assert [e.type for e in playback.step_beat().events] == ["beat", "speak"]
        assert [e.type for e in playback.step_beat().events] == ["beat", "speak", "close"]

    def test_scrubbing_back_rebuilds_from_the_start(self) -> None:
        playback = Playback(self.events())
        playback.seek_index(6)
        move = playback.jump(-0.5)
        assert move.rebuild and playback.playhead == 2.0 and len(move.events) == playback.shown == 4

    def test_speeds_cycle_through_1_4_16(self) -> None:
        playback = Playback([])
        assert [playback.cycle_speed() for _ in range(3)] == [4.0, 16.0, 1.0]


def test_replay_state_is_folded_from_events() -> None:
    fold = StateFold("runs/x")
    fold.feed([event("start", 0.0, cast={"alice": "Alice"}, isolation="a", coordinator="C",
                     scene={"format": "scene", "turns": "parallel"}),
               event("beat", 0.1, beat=0), SpeakEvent(t=0.5, **{"from": "alice"}, text="Hi", beat=0),
               CallEvent(t=0.5, **{"from": "coordinator"}, provider="offline", input_tokens=10, output_tokens=5),
               event("beat", 1.0, beat=1), event("pause", 1.1), CloseEvent(t=2.0, **{"from": "coordinator"}, reason="stop")])
    state = fold.snapshot()
    assert (state.isolation, state.coordinator, state.beat, state.turns["alice"]) == ("a", "C", 1, 1)
    assert (state.tokens, state.status, state.close_reason) == (15, "closed", "stop")
    assert state.elapsed_s == 1.1, "paused from 1.1 s to the close: the clock stood still"
    assert state.beats_played == 1, "beat 1 was begun, and stopped before anything in it was played"


def test_a_closed_run_stays_closed_through_its_journal_step_in_replay() -> None:
    """After the close come the journal step's events: a stop during it, or the seam of a run resumed
    in it (`resume`, reason `journals`); the replayed run is closed all the same."""
    for after in (event("resume", 2.1, reason="journals"), event("stop", 2.1)):
        fold = StateFold("runs/x")
        fold.feed([event("start", 0.0, cast={"alice": "Alice"}), event("beat", 0.1, beat=0),
                   CloseEvent(t=2.0, **{"from": "coordinator"}, reason="natural"), after])
        assert (fold.snapshot().status, fold.snapshot().close_reason) == ("closed", "natural")


def test_the_elapsed_clock_stands_still_while_paused() -> None:
    from promptdesk.tui.stage_state import PlayedTime

    time = PlayedTime()
    time.feed(event("pause", 2.0))
    assert time.played(2.0) == time.played(9.0) == 2.0
    time.feed(event("resume", 10.0))
    assert time.played(11.5) == 3.5


def test_replay_skips_the_time_a_scene_spent_paused() -> None:
    events = [event("start", 0.0), event("beat", 0.5, beat=0), event("pause", 1.0), event("resume", 31.0),
              event("beat", 31.5, beat=1)]
    playback = Playback(events)
    playback.toggle()
    playback.tick(1.0)
    assert [e.type for e in events[:playback.shown]] == ["start", "beat", "pause", "resume"]
    move = playback.tick(0.5)
    assert [e.type for e in move.events] == ["beat"] and playback.playhead == 1.5
    assert playback.duration == 1.5, "the time axis leaves the operator's 30 s pause out"


def test_the_beats_shown_live_in_replay_and_in_the_record_agree(tmp_path) -> None:
    from promptdesk.core.record.outputs import metadata
    from promptdesk.tui.widgets.state_panel import render_state

    events = [event("start", 0.0, cast={"alice": "Alice"}, scene={"format": "scene", "turns": "parallel"}),
              event("beat", 0.1, beat=0), event("beat", 0.2, beat=1), event("beat", 0.3, beat=2),
              CloseEvent(t=0.4, **{"from": "coordinator"}, reason="natural", beat=2)]
    fold = StateFold("runs/x")
    fold.feed(events)
    assert "Beats     3" in render_state(fold.snapshot()).plain
    assert metadata(events)["totalBeats"] == 3
    stopped = [*events[:3], event("event", 0.15, beat=1, text="Rain."), events[3],
               event("route", 0.35, beat=2), CloseEvent(t=0.4, **{"from": "coordinator"}, reason="stop", beat=2)]
    fold = StateFold("runs/y")
    fold.feed(stopped)
    assert "Beats     2" in render_state(fold.snapshot()).plain, "beat 2 was begun; the stop cut it before anything"
    assert metadata(stopped)["totalBeats"] == 2


def test_keys_are_remapped_by_binding_id() -> None:
    assert keymap_from("stage.stop=x; stage.inject=i;bad;=y") == {"stage.stop": "x", "stage.inject": "i"}


def test_the_session_panel_lines_its_columns_up_by_terminal_cells() -> None:
    """A name of wide characters (CJK, emoji) takes two cells a character: the turn counts still stand in
    one column, a name too long is cut by cells, and no row is wider than the panel's text."""
    from rich.cells import cell_len

    from promptdesk.tui.snapshot import StageState
    from promptdesk.tui.widgets.state_panel import render_state

    cast = {"yamada": "山田太郎🎭", "long": "長い名前の登場人物です本当に長い", "bob": "Bob", "ann": "Ann-Marie Long-Surname"}
    state = StageState(cast=cast, tones={"yamada": "穏やかで落ち着いた静かな声で話す感じ"}, slow={"long": 12.0})
    rows = render_state(state, 34).plain.splitlines()
    turns = rows[rows.index("Turns") + 1:]
    counted = [row for row in turns if row.rstrip().endswith("0") and not row.startswith("    ")]
    assert len(counted) == 4
    assert {cell_len(row) for row in counted} == {2 + 18 + 1 + 3}, counted
    assert all(cell_len(row) <= 34 for row in rows), [row for row in rows if cell_len(row) > 34]


def test_replay_counts_the_last_beat_s_silence_as_the_engine_does() -> None:
    """A stall closes right after a beat that ended silent (`beat_end`, then `close`): replay's panel
    counts that beat, as the live panel and the close's own words do ("No one spoke for 3 beats")."""
    cast = {"alice": "Alice", "bob": "Bob"}
    events = [event("start", 0.0, cast=cast, isolation="b", coordinator="C",
                    scene={"format": "scene", "turns": "sequential"}),
              event("beat", 0.1, beat=0, target="alice"), SpeakEvent(t=0.2, **{"from": "alice"}, text="Hi", beat=0),
              event("beat_end", 0.3, beat=0)]
    for beat in (1, 2, 3):
        who = "bob" if beat % 2 else "alice"
        events += [event("beat", beat, beat=beat, target=who),
                   event("system", beat + 0.1, beat=beat, target=who, reason="PROVIDER_ERROR: HTTP 500"),
                   event("beat_end", beat + 0.2, beat=beat)]
    fold = StateFold("runs/x")
    fold.feed(events[:-1])
    assert fold.snapshot().silent_streak == 2, "beat 3 is still being played: two silent beats so far"
    fold.feed([events[-1], CloseEvent(t=3.3, **{"from": "coordinator"}, reason="stall", text="No one spoke for 3 beats")])
    assert fold.snapshot().silent_streak == 3


def test_a_beat_stopped_before_its_end_is_not_counted_silent_in_replay() -> None:
    """The engine counts a beat's silence once the beat has ended; one stopped mid-beat is not counted."""
    fold = StateFold("runs/x")
    fold.feed([event("start", 0.0, cast={"alice": "Alice"}, scene={"format": "scene", "turns": "parallel"}),
               event("beat", 0.1, beat=0), event("beat_end", 0.2, beat=0), event("beat", 1.0, beat=1),
               event("stop", 1.1), CloseEvent(t=1.2, **{"from": "coordinator"}, reason="stop")])
    assert fold.snapshot().silent_streak == 1


def test_a_record_whose_every_event_has_one_time_plays_a_beat_at_a_time_not_all_at_once() -> None:
    """A headless run on the offline improviser of a scene without `latency_ms` (the tutorial's) records
    every event at t = 0: play shows one beat per `TIMELESS_BEAT_S` at 1x (faster at 4x), never the
    whole run on the first tick."""
    from promptdesk.tui.playback import TIMELESS_BEAT_S

    events = [event("start", 0.0), event("beat", 0.0, beat=0), SpeakEvent(t=0.0, **{"from": "alice"}, text="Hi", beat=0),
              event("beat", 0.0, beat=1), SpeakEvent(t=0.0, **{"from": "bob"}, text="Hello", beat=1),
              event("beat", 0.0, beat=2), SpeakEvent(t=0.0, **{"from": "alice"}, text="Bye", beat=2),
              CloseEvent(t=0.0, **{"from": "coordinator"}, reason="natural")]
    playback = Playback(events)
    assert playback.timeless
    playback.toggle()
    assert [e.type for e in playback.tick(1 / 20).events] == ["start"]
    assert playback.tick(TIMELESS_BEAT_S / 2).events == []
    assert [e.type for e in playback.tick(TIMELESS_BEAT_S / 2).events] == ["beat", "speak"]
    playback.cycle_speed()
    assert [e.type for e in playback.tick(TIMELESS_BEAT_S / 4).events] == ["beat", "speak"]
    assert [e.type for e in playback.tick(10.0).events] == ["beat", "speak", "close"]
    assert playback.done and not playback.playing
    assert not Playback(TestPlayback().events()).timeless, "a record with times plays by them"


def test_the_session_panel_says_a_cost_is_unknown_never_just_0() -> None:
    """A call a stop cut off (or whose server sent no usage) and a model with no known price: the
    panel's tokens and cost say `+ unknown`, live and in replay, as the batch summary does."""
    from promptdesk.core.engine.state import SessionState
    from promptdesk.tui.stage_state import from_session
    from promptdesk.tui.widgets.state_panel import render_state

    cut = CallEvent(t=1.0, **{"from": "coordinator"}, provider="openai-compatible", ok=False, usage="unknown",
                    input_tokens=None, output_tokens=None, cost_usd=None)
    fold = StateFold("runs/x")
    fold.feed([event("start", 0.0, cast={"alice": "Alice"}, scene={"format": "scene"}),
               CallEvent(t=0.5, **{"from": "coordinator"}, provider="openai", input_tokens=10, output_tokens=5,
                         cost_usd=0.01), cut])
    shown = render_state(fold.snapshot()).plain
    assert "Tokens    15 + unknown" in shown and "Cost      $0.0100 + unknown" in shown
    live = SessionState(tokens=140, unknown_usage=0)
    shown = render_state(from_session(live, 1.0, {"unpriced_models": ["openai-compatible:slow"]})).plain
    assert "Tokens    140\n" in shown and "Cost      $0.0000 + unknown" in shown, "no price: its cost is unknown"
    fold = StateFold("runs/x")
    fold.feed([event("start", 0.0, cast={"alice": "Alice"}, unpriced_models=["openai-compatible:slow"]), cut])
    assert "Cost      $0.0000 + unknown" in render_state(fold.snapshot()).plain
    assert "Cost      $0.0000\n" in render_state(from_session(SessionState(), 1.0, {})).plain


def test_who_the_scene_waits_on_shows_near_the_top_of_the_panel_not_below_the_turns() -> None:
    """At 80x24 the Session panel shows about 20 rows: with a cast of four and their tones, a
    `Bob  waiting 9 s` row put after the turns was below the fold (only `Waiting on` showed)."""
    from promptdesk.tui.snapshot import StageState
    from promptdesk.tui.widgets.state_panel import render_state

    cast = {"alice": "Alice", "bob": "Bob", "maria": "Maria Stern", "sam": "Sam Reed"}
    state = StageState(cast=cast, tones=dict.fromkeys(cast, "calm"), slow={"bob": 9.0}, status="running",
                       run_dir="runs/x")
    rows = render_state(state, 28).plain.splitlines()
    waiting = next(i for i, row in enumerate(rows) if "waiting 9 s" in row)
    assert waiting < rows.index("Turns") and waiting < 18, rows


@pytest.mark.parametrize("name,unit", [("roundtable-debate", "rounds"), ("roundtable-six-hats", "rounds"),
                                       ("fairy-tale", "rounds"), ("hiking-plan", "rounds"), ("the-apology", "beats")])
def test_the_wizards_scene_line_bounds_each_format_in_its_own_unit(name, unit):
    """A roundtable was said to run "up to 240 beats": a format counted in rounds says its round cap,
    the same the confirm step's Rounds row gives."""
    from promptdesk.core.casting.scene_file import load_scene
    from promptdesk.tui.formats import registry
    from promptdesk.tui.summary import scene_status

    scene = load_scene(ROOT / "scenes" / f"{name}.yaml")
    line = scene_status(scene)
    assert line.endswith(f" {unit}") and ("beats" in line) == (unit == "beats"), line
    rows = dict(registry.get(scene.format).summary_rows(scene))
    assert unit == "beats" or line.endswith(f"{rows['Rounds']} rounds"), (line, rows)
