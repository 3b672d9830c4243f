"""Rubrics: what an evaluator scores after a scene closes, and the JSON schema its answer must keep.

A `Rubric` (`base`) is a list of dimensions, each an integer range with what it measures; it gives the
JSON schema of one actor's scores (each dimension's `reasoning` and `score`) and reads an answer
against it, naming every problem and never clamping a score into range. `RUBRICS` holds the rubrics
by name (`sotopia`: the seven dimensions of SOTOPIA-EVAL). Pure data and functions, no I/O;
imports nothing of Promptdesk but `promptdesk.core.protocol.bounded`.
"""

from __future__ import annotations

from promptdesk.core.protocol.rubrics.base import Dimension, Reading, Rubric, read_answer
from promptdesk.core.protocol.rubrics.sotopia import SOTOPIA

RUBRICS: dict[str, Rubric] = {SOTOPIA.name: SOTOPIA}
"""Every rubric by the name a scene's `evaluate:` and `promptdesk evaluate --rubric` give."""

__all__ = ["RUBRICS", "SOTOPIA", "Dimension", "Reading", "Rubric", "read_answer"]
