"""Experiments over runs: sweeps of every combination (`sweep`, `sweep_checks`, `progress`, `spend`),
metrics from a log alone (`metrics`), comparisons (`compare`) with their statistics (`differences`)
and the HTML report (`report`); takes of one run side by side (`takes`, `takes_report`) and sweeps
of takes (`take_sweep`).

May import casting, formats and every room below; never `core.cli`.
"""
