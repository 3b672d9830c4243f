"""The `roundtable` format (spec 002) on the one engine: a facilitator asks, participants answer blind
(in parallel, or sequentially when a strategy asks for it), the facilitator synthesises, and the round
is written to `session.yaml` in one batch.

Modules, one reason each: `strategies` (phases from YAML files), `answers` (YAML blocks and the
deterministic fallbacks), `prompts` (what each call is told: blindness is structural there),
`escalation` (the triggers and the operator's desk), `record` (`session.yaml` and `summary.md`),
`state` (where the discussion is), `facilitator` and `participants` (the calls).
The turn policy that drives them is `core.policies.roundtable`.
"""
