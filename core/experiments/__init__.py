"""Experiments over runs: sweeps of every combination (`sweep`, `sweep_checks`, `progress`, `spend`),
metrics from a log alone (`metrics`) with its emotional arcs, relationships and per-beat timing
(`arcs`), comparisons (`compare`, in words: `compare_text`) with their statistics (the `stats`
package: pairing by unit, exact permutation tests and their intervals, effect sizes, power, the
adjustment across the table, the factorial view), and the HTML report (`report`, what was run and how
to cite it in `report_header`, its arcs, addressing graph and insights in `report_arcs`); takes of one
run side by side (`takes`, `takes_report`) and sweeps of takes (`take_sweep`).

May import casting, formats and every room below; never `promptdesk.core.cli`.
"""
