"""The figures the experiments page's prose quotes from its worked comparison, computed from what the
commands print (the block, `compare --unpaired`, `compare --csv`), and the phrases that quote them: the
prose is held to the sweep as the block is, so a change to the improviser cannot leave it stale."""

from __future__ import annotations

import csv
import io
import re

WORDS = "zero one two three four five six seven eight nine ten".split()
MINUS = str.maketrans({"-": "−"})


def _row(text: str, metric: str, a: str, b: str) -> tuple[str, ...]:
    """A paired row's cells: metric a b n diff lo hi d_z d_lo d_hi p holm power."""
    for line in text.splitlines():
        found = re.match(rf"\s*{metric}\s+{a}\s+{b}\s+(\S+)\s+(\S+)\s+(\S+) to (\S+)\s+(\S+) \((\S+) to (\S+)\)\s+"
                         r"(\S+)\s+(\S+)(?: \*)?\s+(\S+)\s*$", line)
        if found:
            return found.groups()
    raise AssertionError(f"no {metric} {a} {b} row in the printed comparison")


def figures(block: str, unpaired: str, table: str) -> dict[str, str]:
    """Each figure the prose quotes, written as the prose writes it."""
    f: dict[str, str] = {}
    turns, echo = _row(block, "turns", "a-B", "b-B"), _row(block, "echo", "a-B", "b-B")
    f["p_turns"], f["p_echo"] = f"{float(turns[7]):.2f}", f"{float(echo[7]):.2f}"
    f["power_turns"], f["power_echo"] = f"{int(turns[9]):,}", f"{int(echo[9]):,}"
    bc = _row(block, "tokens", "a-B", "a-C")
    f["bc_diff"], f["bc_lo"], f["bc_hi"], f["bc_dz"] = bc[1].lstrip("-+"), bc[2].translate(MINUS), \
        bc[3].translate(MINUS), bc[4].translate(MINUS)
    cc, bb = _row(block, "tokens", "a-C", "b-C"), _row(block, "tokens", "a-B", "b-B")
    f.update(c_diff=cc[1].lstrip("+"), c_lo=cc[2], c_hi=cc[3], c_p=cc[7], c_holm=cc[8], c_power=cc[9],
             b_diff=bb[1].lstrip("+"), b_p=bb[7])
    tokens = {(r["condition"], r["seed"]): int(r["tokens"]) for r in csv.DictReader(io.StringIO(table))}
    seeds = sorted({seed for _, seed in tokens}, key=int)
    f["c_seeds"] = WORDS[sum(tokens["b-C", s] > tokens["a-C", s] for s in seeds)]
    f["b_seeds"] = WORDS[sum(tokens["b-B", s] > tokens["a-B", s] for s in seeds)]
    f["bc_every"] = str(sum(tokens["a-C", s] < tokens["a-B", s] for s in seeds))
    found = re.search(r"tokens\s+a-C\s+b-C\s+\S+\s+\S+\s+(\S+) to (\S+)\s+\S+ \(\S+ to \S+\)\s+(\S+)\s+\S+\s+(\S+)", unpaired)
    assert found, "no tokens a-C b-C row in the unpaired comparison"
    f.update(u_lo=found[1].translate(MINUS), u_hi=found[2], u_p=f"{float(found[3]):.2f}", u_power=found[4])
    lines = block.splitlines()
    at = next(i for i, line in enumerate(lines) if re.match(r"tokens\s+isolation\s", line))
    iso = re.match(r"tokens\s+isolation\s+(\S+)\s+1, 9\s+(\S+)\s+(\S+).*a ([\d,]+) · b ([\d,]+)", lines[at])
    coo = re.match(r"\s+coordinator\s+(\S+)\s+1, 9.*B ([\d,]+) · C ([\d,]+)", lines[at + 1])
    both = re.match(r"\s+isolation × coordinator\s+(\S+)\s+1, 9\s+(\S+)", lines[at + 2])
    assert iso and coo and both, "the factorial view's tokens rows"
    n = lambda s: int(s.replace(",", ""))  # noqa: E731
    f.update(co_f=coo[1], co_gap=f"{n(coo[2]) - n(coo[3]):,}", is_f=iso[1], is_p=iso[2], is_holm=iso[3],
             is_gap=f"{n(iso[5]) - n(iso[4]):,}")
    ix = float(both[1])
    f.update(ix_f=f"{ix:.2g}" if ix < 0.1 else f"{ix:.3g}", ix_p=f"{float(both[2]):.2f}")
    f["is_claim"] = ("not past 0.05 even on its own" if float(iso[2]) > 0.05 else
                     "past 0.05 on its own but not after Holm's adjustment")
    holds = {"every pair lower with C": f["bc_every"] == "10", "d_z more than six": abs(float(bc[4])) > 6,
             "C's isolation difference not starred": float(cc[8]) > 0.05, "B's less consistent than C's": float(bb[7]) > float(cc[7]),
             "isolation not starred after Holm": float(iso[3]) > 0.05, "the coordinator's partial η² 0.98": "0.98" in lines[at + 1]}
    assert all(holds.values()), f"the prose's claims no longer hold ({[k for k, v in holds.items() if not v]}): rewrite it"
    return f


PHRASES = (
    "p = {p_turns} for turns and {p_echo} for echo",
    "the power notes ask for {power_turns} and {power_echo} seeds",
    "`tokens a-B a-C` is {bc_diff} fewer tokens with C, lower in every one of the {bc_every} pairs",
    "the interval ({bc_lo} to {bc_hi}) is the shifts",
    "d_z = {bc_dz} says",
    "b costs {c_diff} tokens more ({c_lo} to {c_hi}), in {c_seeds} seeds of ten, so p = {c_p} on its own",
    "Holm lifts it to {c_holm}, over 0.05",
    "one p of {c_p} is not evidence enough",
    "Under B the {b_diff} more are less consistent ({b_seeds} seeds of ten, p = {b_p})",
    "its interval runs from {u_lo} to {u_hi}, p = {u_p}, and its power note asks for {u_power} seeds instead of {c_power}",
    "(F = {co_f} on 1 and 9 degrees of freedom, partial η² 0.98, C about {co_gap} below B)",
    "isolation moves them far less, {is_claim} (F = {is_f}, p = {is_p} alone, {is_holm} after Holm, b about {is_gap} above a)",
    "(F = {ix_f}, p = {ix_p})",
)
"""What the prose says with each figure (its words around them, so a phrase cannot match by chance)."""


def stale(prose: str, found: dict[str, str]) -> list[str]:
    """The phrases the prose should hold and does not (whitespace as one space)."""
    said = " ".join(prose.split())
    return [phrase.format(**found) for phrase in PHRASES if phrase.format(**found) not in said]
