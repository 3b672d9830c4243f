"""A comparison in words: the differences table's header and cells, the factorial table, the notes
under them and the sentence to cite a result with. The text command, the console's Compare screen and
the HTML reports all read these, so every form says the same thing."""

from __future__ import annotations

from collections import defaultdict

from promptdesk.core.experiments.compare import Comparison, number
from promptdesk.core.experiments.stats.design import unit_text
from promptdesk.core.experiments.stats.effects import MOST_SEEDS
from promptdesk.core.experiments.stats.factorial import Factorial, Term
from promptdesk.core.experiments.stats.multiplicity import ADJUSTMENTS, SHORT, WHAT
from promptdesk.core.experiments.stats.rows import NO_COMMON, TOO_FEW_PAIRS, Difference, smallest_p
from promptdesk.core.experiments.stats.shift import EXACT_ARRANGEMENTS, EXACT_PAIRS, RANDOM_ARRANGEMENTS
from promptdesk.core.experiments.takes import Family
from promptdesk.core.record.outputs import NOT_COMPLETED
from promptdesk.core.record.audit import counted


def signed(x: float) -> str:
    return ("+" if x > 0 else "") + number(x)


def p_text(p: float | None) -> str:
    if p is None:
        return "—"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def p_is(p: float | None) -> str:
    """A p-value as a sentence cites it: `p = 0.012`, `p < 0.001` (never `p = <0.001`)."""
    text = p_text(p)
    return f"p {text[0]} {text[1:]}" if text.startswith("<") else f"p = {text}"


def level(comparison: Comparison) -> str:
    """The interval's confidence level as a reader says it (95%)."""
    return f"{1 - comparison.options.alpha:.0%}"


def difference_header(comparison: Comparison) -> list[str]:
    """The columns of the differences table (text, console and HTML alike)."""
    wilcoxon = comparison.paired and comparison.options.test == "wilcoxon"
    return ["metric", "a", "b", "n", "b − a (HL)" if wilcoxon else "b − a", f"{level(comparison)} CI",
            f"{comparison.statistics.effect_name} ({level(comparison)} CI)", "p",
            f"p ({SHORT[comparison.options.adjust]})", f"seeds for {comparison.options.power:.0%} power"]


def shown_differences(comparison: Comparison) -> list[Difference]:
    """The differences worth a row: tested ones where not every difference was 0, and, between
    conditions, the untested ones, which say why (too few pairs) where a p-value would be (one run
    per column has no test to speak of: the notes say so once)."""
    return [d for d in comparison.differences
            if (d.tested and not d.all_equal) or (d.untested and comparison.by == "condition")]


def tested_differences(comparison: Comparison) -> list[Difference]:
    """The rows with a test that could reject (not every difference 0)."""
    return [d for d in comparison.differences if d.tested and not d.all_equal]


def interval_text(d: Difference) -> str:
    if d.ci_unbounded:
        return "unbounded"
    return "—" if d.ci_low is None else f"{number(d.ci_low)} to {number(d.ci_high)}"


def seeds_text(seeds: int | None) -> str:
    if seeds is None:
        return "—"
    return f"> {MOST_SEEDS:,}" if seeds > MOST_SEEDS else str(seeds)


def difference_cells(d: Difference) -> list[str]:
    """One row of the differences table; `*` marks a difference significant after adjustment."""
    effect = "—" if d.effect is None else f"{signed(d.effect)} ({number(d.effect_low)} to {number(d.effect_high)})"
    p = d.untested if d.untested else p_text(d.p_value)
    return [d.metric, d.a, d.b, d.n_text, "—" if d.diff is None else signed(d.diff), interval_text(d), effect,
            p, p_text(d.p_adjusted) + (" *" if d.significant else ""), seeds_text(d.seeds_needed)]


FACTORIAL_HEADER = ["metric", "term", "F", "df", "p", "partial η²", "level means"]


def factorial_header(comparison: Comparison) -> list[str]:
    head = list(FACTORIAL_HEADER)
    head.insert(5, f"p ({SHORT[comparison.options.adjust]})")
    return head


def term_cells(f: Factorial, term: Term, first: bool) -> list[str]:
    means = f.means.get(term.term, {})
    return [f.name if first else "", term.term, "—" if term.f is None else number(term.f),
            f"{term.df_num:g}, {term.df_den:g}", p_text(term.p_value),
            p_text(term.p_adjusted) + (" *" if term.significant else ""),
            "—" if term.partial_eta_sq is None else f"{term.partial_eta_sq:.2f}",
            " · ".join(f"{lvl} {number(m)}" for lvl, m in means.items()) or "—"]


def factorial_rows(comparison: Comparison) -> list[list[str]]:
    """A row per term of every metric with a factorial analysis."""
    return [term_cells(f, t, i == 0) for f in comparison.factorial for i, t in enumerate(f.terms)]


def test_name(comparison: Comparison) -> str:
    """The test as a citation names it."""
    if not comparison.paired:
        return "two-sample permutation test"
    return "Wilcoxon signed-rank test" if comparison.options.test == "wilcoxon" else "sign-flip permutation test"


def design_notes(comparison: Comparison) -> list[str]:
    """What the design is, which test, which interval and which effect size."""
    options, unit = comparison.options, comparison.unit.name
    if comparison.paired:
        design = (f"Paired by {unit}: the conditions share {plural(unit)}, so each difference b − a is taken {unit} by {unit} "
                  f"and n counts the pairs (a {unit} without a known value on both sides is dropped from that pair).")
        if options.test == "wilcoxon":
            test = (f"Test: two-sided Wilcoxon signed-rank test of the paired differences (zero differences dropped; "
                    f"exact over every sign flip up to {EXACT_PAIRS} pairs); b − a (HL) is the Hodges–Lehmann shift, "
                    f"and the {level(comparison)} CI is the shifts the test does not reject.")
        else:
            test = (f"Test: two-sided sign-flip permutation test of the mean paired difference, exact over all 2^n sign "
                    f"flips up to {EXACT_PAIRS} pairs ({RANDOM_ARRANGEMENTS:,} random flips beyond); the "
                    f"{level(comparison)} CI is the shifts that test does not reject.")
        effect = "d_z: the mean difference over the sd of the differences"
    else:
        why = "--unpaired" if options.unpaired else f"the conditions share no {unit}"
        design = f"Unpaired ({why}): each condition's runs are an independent sample; n is each side's known values."
        test = (f"Test: two-sided permutation test of the difference of means, exact over every deal of the runs up to "
                f"{EXACT_ARRANGEMENTS:,} deals ({RANDOM_ARRANGEMENTS:,} random deals beyond); the {level(comparison)} "
                "CI is the shifts that test does not reject.")
        effect = "Hedges' g: the difference of means over the pooled sd, small-sample corrected"
        if options.test == "wilcoxon":
            test += " --test wilcoxon was not used: the signed-rank test is for paired data only."
    return [design, test + f" Interval and test agree: the CI excludes 0 exactly when p ≤ {options.alpha}.",
            f"Effect size {effect}, with its {level(comparison)} noncentral-t interval."]


def adjustment_notes(comparison: Comparison) -> list[str]:
    """The adjustment, and whether anything could reach alpha after it at all."""
    options, m = comparison.options, comparison.statistics.family
    out = [f"p ({SHORT[options.adjust]}): adjusted by {ADJUSTMENTS[options.adjust]}'s method ({WHAT[options.adjust]}, "
           f"--adjust {options.adjust}) across the {counted(m, 'test')} of this table that could reject; * marks p ({SHORT[options.adjust]}) "
           f"≤ {options.alpha}. A row where {_all_equal(comparison)} has p = 1 and is neither counted nor shown."]
    smallest = smallest_p(comparison.statistics)
    if smallest is not None and options.adjust == "holm" and smallest * m > options.alpha:
        out.append(f"With these units the smallest p the exact test can give is {smallest:.2g}: times {m} tests it "
                   f"cannot reach {options.alpha}, so no difference can be significant after Holm's adjustment. Run more "
                   "seeds, compare fewer metrics (--metrics) or use --adjust bh.")
    return out


def plural(unit: str) -> str:
    """A unit's plural: `seeds`, or `scenes and seeds` (a benchmark's pairs), never `scene and seeds`."""
    return unit.replace("scene", "scenes") + "s"


def _all_equal(comparison: Comparison) -> str:
    """What a row left out as p = 1 had: every paired difference 0, or (unpaired) one value in every run."""
    return "every difference was 0" if comparison.paired else "every run of both conditions had the same value"


def untested_notes(comparison: Comparison) -> list[str]:
    """Rows left out of the table, and seeds dropped from pairs."""
    out = []
    equal = [d for d in comparison.differences if d.all_equal]
    untested: dict[str, list[str]] = defaultdict(list)
    for d in comparison.differences:
        if d.untested:
            untested[d.untested].append(d.metric)
    if equal:
        out.append(f"Not shown: {len(equal)} where {_all_equal(comparison)} (p = 1).")
    for reason, metrics in untested.items():
        named = ", ".join(f"{m} ({metrics.count(m)} pair{'s' if metrics.count(m) > 1 else ''} of conditions)"
                          for m in dict.fromkeys(metrics))
        unit = comparison.unit.name
        what = {TOO_FEW_PAIRS: f"fewer than 2 {plural(unit)} known on both sides",
                NO_COMMON.format(unit=unit): f"the two conditions share no {unit}, so nothing pairs; --unpaired compares "
                                             "every pair of conditions as independent samples"}.get(reason, reason)
        out.append(f"No test ({reason if what == reason else f'{reason}: {what}'}), so no p-value: {named}.")
    dropped: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for d in comparison.differences:
        # a "too few pairs" row with one pair names the units it could not use too (with none, it could use no unit)
        if d.dropped and (not d.untested or (d.untested == TOO_FEW_PAIRS and d.pairs)):
            dropped[(d.a, d.b, unit_text(d.dropped))].append(d.metric)
    if dropped:
        every = set(comparison.metrics)
        parts = [f"{a} vs {b}: {units} ({'every metric' if set(ms) == every else ', '.join(ms)})"
                 for (a, b, units), ms in dropped.items()]
        out.append(f"{plural(comparison.unit.name).capitalize()} dropped from pairs (no run, or an unknown value, on one side): "
                   + "; ".join(parts) + ".")
    return out


def left_out_notes(comparison: Comparison) -> list[str]:
    """The planned runs of an unfinished sweep that are not in the comparison (no result yet)."""
    out = []
    for sweep in comparison.left_out:
        named = ", ".join(_left_out_condition(condition, seeds, sweep.get("scenes", {}).get(condition))
                          for condition, seeds in sweep["seeds"].items())
        if named:
            writer = (sweep.get("sweeping") or "").partition(" ")[0]
            then = (f"the sweep is still running (process {writer}): compare again when it has finished" if writer
                    else "run the sweep's command again to finish it")
            out.append(f"{sweep['folder']}: {sweep['finished']} of {sweep['planned']} planned runs have a result; "
                       f"left out, with no result yet: {named} ({then}).")
        if sweep.get("unrecorded"):
            failed = "; ".join(f"{name} ({error})" for name, error in sweep["unrecorded"].items())
            out.append(f"{sweep['folder']}: failed before recording anything, so not compared: {failed}.")
    return out


def _left_out_condition(condition: str, seeds: list[int], scenes: dict[str, int] | None) -> str:
    """`a-C seeds 1-8`; for a benchmark, how many runs of how many scenes (a list of every scene's seeds
    would run to hundreds of names), or the scene itself when it is one."""
    seeds_text = f"seed{'s' if len(seeds) > 1 else ''} {unit_text(seeds)}"
    if not scenes:
        return f"{condition} {seeds_text}"
    runs = sum(scenes.values())
    where = next(iter(scenes)) if len(scenes) == 1 else f"{len(scenes)} scenes"
    return f"{condition} {runs} run{'s' if runs > 1 else ''} ({where}, {seeds_text})"


def unclosed_notes(comparison: Comparison) -> list[str]:
    """The runs in the comparison that did not close on their own (stopped, failed, cut by a budget,
    never closed): their values are in the means and tests as recorded, so the reader is told which."""
    by_reason: dict[str, list[str]] = defaultdict(list)
    for run in comparison.runs:
        if run.close_reason in (*NOT_COMPLETED, "incomplete"):
            by_reason[run.close_reason].append(run.run)
    if not by_reason:
        return []
    named = "; ".join(f"{', '.join(runs)} ({reason})" for reason, runs in by_reason.items())
    return [f"Did not close on their own, counted as recorded (what they reached before they ended): {named}."]


def notes(comparison: Comparison) -> list[str]:
    """The sentences under the tables: the runs left out, the design, the test, the adjustment, what is
    significant, the power note and the factorial view."""
    if comparison.by == "run":
        return [*left_out_notes(comparison), *unclosed_notes(comparison), *takes_notes(comparison.takes),
                *([comparison.kin] if comparison.kin else []),
                "One run per column: no seed-to-seed spread to test a difference against (compare a sweep for that)."]
    if len(comparison.columns) < 2:
        only = ", ".join(comparison.columns) or "none"
        return [*left_out_notes(comparison), *unclosed_notes(comparison),
                f"One condition ({only}): nothing to compare it with, so no test; the table is its mean ± sd over its runs."]
    options, m = comparison.options, comparison.statistics.family
    out = left_out_notes(comparison) + unclosed_notes(comparison) + design_notes(comparison)
    if not m:
        return [*out, *untested_notes(comparison),
                f"No row could reject (each untested, or with {'every difference 0' if comparison.paired else 'one value in every run'}), "
                "so nothing was adjusted and no difference is significant.",
                *factorial_notes(comparison)]
    out += adjustment_notes(comparison) + untested_notes(comparison)
    significant = comparison.significant
    if significant:
        out.append(f"Significant at {options.alpha} after adjustment (*): "
                   + "; ".join(f"{d.metric} ({d.a} vs {d.b})" for d in significant) + ".")
    else:
        out.append(f"No difference is significant at {options.alpha} after adjustment.")
    have = max((d.pairs or 0) if d.design == "paired" else min(d.n_a, d.n_b) for d in comparison.differences) \
        if comparison.differences else 0
    more = [d for d in tested_differences(comparison) if not d.significant and d.seeds_needed and d.seeds_needed > have]
    what = "pairs" if comparison.paired else "runs per condition"
    out.append(f"Seeds for {options.power:.0%} power: {what} for the {'paired' if comparison.paired else 'two-sample'} "
               f"t-test to find an effect of the observed size at {options.alpha} / {max(m, 1)} (the level the adjustment "
               "asks of the first test), taking the observed effect as the true one; never fewer than the exact test "
               "needs to reach that level" + (f"; {len(more)} not significant here would need more than the {have} run."
                                               if more else "."))
    out += factorial_notes(comparison)
    return out


def factorial_notes(comparison: Comparison) -> list[str]:
    """What the factorial table is, and the metrics it could not analyse."""
    if not comparison.factorial:
        return []
    first = comparison.factorial[0]
    three = [f"{k} ({len(v)} levels)" for k, v in next((f.means for f in comparison.factorial if f.means), {}).items()
             if len(v) > 2]
    sphericity = (f" and, for {' and '.join(three)}, sphericity (equal spread of the differences between its levels; "
                  "no correction applied)") if three else ""
    unit = comparison.unit.name
    how = (f"a two-way repeated-measures ANOVA with {'the seed' if unit == 'seed' else f'each {unit}'} as subject "
           f"(statsmodels AnovaRM), on the {unit.replace('scene', 'scenes')}s known in every cell; it assumes roughly "
           f"normal values{sphericity}"
           if first.design.startswith("repeated") else
           "a two-way ANOVA of the runs with interaction (statsmodels OLS, type II sums of squares)")
    skipped = [f"{f.name} ({f.untested})" for f in comparison.factorial if f.untested]
    adjusted = (f"Its p-values are adjusted together ({ADJUSTMENTS[comparison.options.adjust]}, "
                f"{comparison.factorial_family} tests)" if comparison.factorial_family else "No term has a p-value")
    labels = list(dict.fromkeys(f.label for f in comparison.factorial if f.label))
    apart = f", for each of {', '.join(labels)} apart (its own isolation × coordinator cells)" if labels else ""
    nothing_within = (f"the same difference in every {unit}" if first.design.startswith("repeated")
                      else "no spread of the runs within its cells")
    return [f"Factorial view (isolation × coordinator){apart}: {how}. {adjusted}; partial η² is the share "
            "of the variance the term explains once the other terms are set aside. A term shown — has no F: no "
            f"difference at all between its levels, or {nothing_within} (nothing to test it against)."
            + (f" Not analysed: {'; '.join(skipped)}." if skipped else "") + _factorial_dropped(comparison)]


def _factorial_dropped(comparison: Comparison) -> str:
    """The units a repeated-measures factorial left out (not known in every cell), with how many it used."""
    groups: dict[tuple, list[str]] = {}
    for f in comparison.factorial:
        if f.dropped and not f.untested:
            groups.setdefault((f.units, tuple(f.dropped)), []).append(f.name)
    if not groups:
        return ""
    unit = comparison.unit.name
    said = [(f"{', '.join(names)}: " if len(groups) > 1 else "") + f"n = {units} {plural(unit)}, {unit_text(list(left))} dropped"
            for (units, left), names in groups.items()]
    return f" {plural(unit).capitalize()} not known in every cell are left out of it ({'; '.join(said)})."


def cite(comparison: Comparison) -> str:
    """How to cite a number of this comparison: the test, n, the adjustment and an example row."""
    if comparison.by == "run":
        return "One run per column: these are descriptions of single runs, not estimates; cite them as such."
    if len(comparison.columns) < 2:
        return ("One condition: its mean ± sd over its runs describe it; there is no difference to test, so cite "
                "no p-value.")
    shown = tested_differences(comparison)
    example = min(shown, key=lambda d: d.p_value or 1.0) if shown else None
    options = comparison.options
    n = ("n = pairs of " + plural(comparison.unit.name)) if comparison.paired else "n = runs per condition"
    head = (f"Report each difference with its {level(comparison)} CI, the test ({test_name(comparison)}, "
            f"{'paired by ' + comparison.unit.name if comparison.paired else 'unpaired'}), {n}, the effect size "
            f"({comparison.statistics.effect_name}) and the p-value adjusted by {ADJUSTMENTS[options.adjust]} across "
            f"{comparison.statistics.family} tests.")
    if example is None:
        return head
    return head + (f" For example: {example.metric}, {example.b} − {example.a} = {signed(example.diff or 0)} "
                   f"({level(comparison)} CI {interval_text(example)}; {test_name(comparison)}, n = {example.n_text}, "
                   f"{p_is(example.p_value)}, {SHORT[options.adjust]}-adjusted {p_is(example.p_adjusted)}"
                   + (f"; {comparison.statistics.effect_name} = {number(example.effect)}" if example.effect is not None
                      else "") + ").")


def takes_notes(takes: Family | None) -> list[str]:
    """What a comparison of takes says first: the shared part, and where the takes part ways."""
    if takes is None:
        return []
    shared = (f"beats 0 to {takes.branched_at - 1}" if (takes.branched_at or 0) > 1 else "beat 0" if takes.branched_at
              else "nothing but their start")
    where = (f"They diverge at beat {takes.diverges_at}." if takes.diverges_at is not None else
             f"They played the same from beat {takes.branched_at} to the close: no divergence.")
    return [f"Takes of one scene: they share {shared} (recorded once, paid once); every metric is of beat "
            f"{takes.branched_at} on. {where}"]
