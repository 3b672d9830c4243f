"""Experiments over runs: sweeps of every combination (`sweep`, `sweep_plan`, `sweep_checks`, `progress`, `spend`),
metrics from a log alone (`metrics`) with its emotional arcs, relationships and per-beat timing
(`arcs`), comparisons (`compare`, in words: `compare_text`) with their statistics (the `stats`
package: pairing by unit, exact permutation tests and their intervals, effect sizes, power, the
adjustment across the table, the factorial view), and the HTML report (`report`, what was run and how
to cite it in `report_header`, its arcs, addressing graph and insights in `report_arcs`); takes of one
run side by side (`takes`, `takes_report`) and sweeps of takes (`take_sweep`). Benchmarks as a scene
source: Sotopia's export imported as scenes and characters (the `sotopia` package), benchmark sweeps
over scenes and models (`benchmark`), scoring closed runs after the fact (`evaluate`) and the
evaluations in a run's words, a comparison and the reports (`evaluation_view`, `evaluation_compare`,
`report_evaluation`).

May import casting, formats and every room below; never `promptdesk.core.cli`.
"""
