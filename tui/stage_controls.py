"""Which stage controls can act now, and why the others cannot (the footer hides them; a press says why)."""

from __future__ import annotations

from typing import Any


def pace_told(before: float, seconds: float) -> str:
    """What `+`/`-` say: the pace now; at a bound (it did not change), that it goes no further."""
    if seconds == before:
        return (f"Pace: at least {seconds:g} s per beat, the slowest it goes (- makes it faster)" if seconds else
                "Pace: already off (each beat starts as soon as the last one ends; + slows it)")
    return f"Pace: at least {seconds:g} s per beat" if seconds else "Pace: off (each beat starts as soon as the last one ends)"


def why_not(stage: Any, action: str) -> str | None:
    """Why the stage's control `action` cannot act now (None: it can)."""
    status = stage.bridge.status if stage.bridge.worker else "ready"
    live, closed = status in ("running", "paused"), status == "closed"
    over = "the scene has closed" if closed else "the scene is not running"
    if action == "stop" and not stage.bridge.live:
        return over
    if action in ("inject", "note") and not live:
        return over
    if action == "pause" and status != "running":
        return "the scene is already paused (r resumes it)" if status == "paused" else over
    if action == "resume" and status != "paused":
        return "the scene is not paused" if status == "running" else over
    if action == "pace" and not (stage.bridge.live and hasattr(stage.session, "set_pace")):
        return over
    if action == "new_scene" and not closed:
        return "a new scene starts once this one has closed"
    if action == "replay" and not closed:
        return "the replay opens once the scene has closed"
    if action == "escalation" and stage.waiting is None:
        return "nothing is waiting for your decision" if stage.format.ask_help else \
            f"a {stage.format.noun} never waits for your decision (only a roundtable's escalation does)"
    if action == "accept_suggestion":
        return suggestion_why_not(stage.session.state, live, over)
    if action == "panes":
        return stage.panes_why_not()
    if action == "room" and not stage.has_room:
        return "this stage has no room"
    if action == "leave" and not stage.stacked:
        return "there is no screen below this stage"
    return None


def suggestion_why_not(state: Any, live: bool, over: str) -> str | None:
    """Why `y` cannot inject the coordinator's suggested world event now (None: it can)."""
    if not live:
        return over
    if getattr(state, "suggestion", None):
        return None
    withheld = getattr(state, "withheld", None)
    return f"the coordinator's suggestion was withheld ({withheld})" if withheld else \
        "the coordinator has suggested no world event"


def bound_keys(screen: Any, binding_id: str) -> list[str]:
    """The keys that trigger the binding `binding_id` of `screen` now (remapped by `PROMPTDESK_KEYMAP` or not)."""
    keymap = screen.app._keymap
    return [k.strip() for own, bindings in screen._bindings.key_to_bindings.items() for binding in bindings
            if binding.id == binding_id for k in keymap.get(binding_id, own).split(",")]


def told_why(stage: Any, key: str) -> bool:
    """When `key` is a stage control that cannot act now (remapped by `PROMPTDESK_KEYMAP` or not), say
    why (a toast) and return True."""
    keymap = stage.app._keymap
    bound = (binding for own, bindings in stage._bindings.key_to_bindings.items() for binding in bindings
             if key in [k.strip() for k in keymap.get(binding.id or "", own).split(",")])
    for binding in bound:
        name = binding.action.split("(", 1)[0]
        reason = why_not(stage, name)
        if reason is None or not binding.description:
            continue
        stage.notify(f"{binding.description}: not now, {reason}.", title="Not now", markup=False, timeout=3)
        return True
    return False
