"""`make bench`'s engine figures are measured on one clock: a beat's recorded span and its calls
both in wall time (a run on the improviser alone would otherwise be on simulated time, where the
calls cost nothing and the ratio reads tens)."""

from __future__ import annotations

from benchmarks import engine


def test_beat_overhead_ratio_compares_a_beat_with_its_slowest_call_on_the_wall_clock():
    ratio = engine.beat_overhead_ratio(beats_wanted=3, latency=(50, 100))
    assert 0.99 <= ratio < 2, f"a beat's span over its slowest call: {ratio}"


def test_make_bench_runs_each_module_in_a_fresh_interpreter(tmp_path, monkeypatch, capfd):
    """What one benchmark leaves in its process cannot weigh on the next: each runs in its own."""
    import os
    from pathlib import Path

    import benchmarks.__main__ as bench

    (tmp_path / "probe_bench.py").write_text("import os\n\ndef run():\n    return {'pid': os.getpid()}\n")
    root = Path(bench.__file__).resolve().parent.parent
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(root)]))
    monkeypatch.setattr(bench, "MODULES", ("probe_bench", "probe_bench", "no_such_bench"))
    assert bench.main([]) == 0
    out = capfd.readouterr()
    pids = [int(line.split(": ")[1]) for line in out.out.splitlines() if line.startswith("pid: ")]
    assert len(pids) == 2 and len(set(pids)) == 2 and os.getpid() not in pids
    assert "# no_such_bench unavailable" in out.err
