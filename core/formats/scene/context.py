"""What `notes.md` says of a scene's context: the window, and which past thoughts a thread re-sends."""

from __future__ import annotations

from promptdesk.core.engine.scene import Scene

THREAD_THINKING = {"keep": "every past reply keeps its thinking", "last": "only the most recent reply keeps its thinking",
                   "drop": "past replies keep their speech only"}


def context_lines(scene: Scene, isolation: str) -> list[str]:
    """How much context each request carries: the window, and (isolation b) which past thoughts are re-sent."""
    window, thinking = scene.limits.window, scene.thread_thinking
    if isolation == "a":
        others = len(scene.characters) - 1
        short = (f" (fewer than the other {others} actors say in one beat: beyond the lines new since its last "
                 f"turn, an actor sees {window} earlier ones; raise `limits.window` to keep more)") if window < others else ""
        return [f"- Context window: the last {window} lines each actor witnessed{short}",
                f"- thread_thinking: {thinking} (isolation b only: no thread is kept here)"]
    return [f"- Context window: the thread keeps {window}–{2 * window - 1} turns, dropping {window} at a time",
            f"- thread_thinking: {thinking} ({THREAD_THINKING[thinking]})"]
