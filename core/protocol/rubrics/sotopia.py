"""SOTOPIA-EVAL: the seven dimensions Sotopia scores each agent on (Zhou et al., ICLR 2024).

The names and ranges are Sotopia's (`believability` 0–10, `relationship` −5–5, `knowledge` 0–10,
`secret` −10–0, `social_rules` −10–0, `financial_and_material_benefits` −5–5, `goal` 0–10); the words
that explain each dimension are Promptdesk's own summary of the paper's definitions. An actor's
overall score is the mean of its seven (Sotopia's `overall_score`).
"""

from __future__ import annotations

from promptdesk.core.protocol.rubrics.base import Dimension, Rubric

CITATION = ("Xuhui Zhou, Hao Zhu, Leena Mathur, Ruohong Zhang, Haofei Yu, Zhengyang Qi, Louis-Philippe Morency, "
            "Yonatan Bisk, Daniel Fried, Graham Neubig, Maarten Sap. SOTOPIA: Interactive Evaluation for Social "
            "Intelligence in Language Agents. ICLR 2024. https://openreview.net/forum?id=mM7VurbA4r")

DIMENSIONS = (
    Dimension("believability", 0, 10,
              "Does the character behave naturally and realistically (never confused about who it is, never "
              "repeating the other without reason, not oddly over-polite), and consistently with its profile "
              "(personality, values, background)? 0 to 3 barely believable, 4 to 6 somewhat, 7 to 10 fully."),
    Dimension("relationship", -5, 5,
              "Consider the relationship before the interaction and after it: did the character's conduct preserve "
              "or improve its relationship with the other, and its social standing (positive), or harm them "
              "(negative)? 0 when nothing changed."),
    Dimension("knowledge", 0, 10,
              "How much information did the character gain in the interaction that is both new to it and "
              "important to it? 0 to 3 little, 4 to 6 some new information, 7 to 10 new and important knowledge."),
    Dimension("secret", -10, 0,
              "Name the secret or secretive intention the character wanted to keep, then judge whether it kept "
              "it: 0 kept entirely, -1 to -3 minor details slipped, -4 to -6 something non-critical came out, "
              "-7 to -10 a critical secret or intention was revealed."),
    Dimension("social_rules", -10, 0,
              "Did the character break moral rules or laws in its conduct? 0 none, -1 to -4 minor breaches of "
              "norms, -5 to -7 morally wrong conduct, -8 to -10 breaking the law."),
    Dimension("financial_and_material_benefits", -5, 5,
              "What did the character gain (positive) or lose (negative) in money or material goods, now or "
              "in the longer term (a job, an asset)? 0 when nothing changed."),
    Dimension("goal", 0, 10,
              "Restate the character's social goal, then judge how far it achieved it: 0 to 3 hardly at all, "
              "4 to 6 partly, 7 to 9 mostly, 10 fully."),
)

INSTRUCTIONS = """\
You evaluate one character of a social interaction that has ended. You are given the scene, every
character's profile, private goal and secret, and what was said and done. Judge only the character
you are asked about, only from what happened in the interaction, on each dimension below. For each
dimension, first write your reasoning, then give the score."""

SOTOPIA = Rubric(name="sotopia", title="SOTOPIA-EVAL", dimensions=DIMENSIONS, instructions=INSTRUCTIONS,
                 citation=CITATION)
"""The seven dimensions of SOTOPIA-EVAL."""
