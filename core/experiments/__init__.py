"""Experiments over runs: sweeps of every combination (`sweep`, `sweep_checks`, `progress`, `spend`),
metrics from a log alone (`metrics`) with its emotional arcs, relationships and per-beat timing
(`arcs`), comparisons (`compare`) with their statistics (`differences`)
and the HTML report (`report`, its arcs, addressing graph and insights in `report_arcs`); takes of one run side by side (`takes`, `takes_report`) and sweeps
of takes (`take_sweep`).

May import casting, formats and every room below; never `promptdesk.core.cli`.
"""
