"""The run report's emotional arcs, addressing graph and character insights: inline SVG, no script.

Tones are a model's words, so every one goes through `html_text` (escaped, controls dropped) before it reaches the page.
Each distinct tone gets a colour of `PALETTE` in the order tones first appear (the same tone, the
same colour on every actor's row), named in a legend; the chart cell's tooltip names the beat and tone.
"""

from __future__ import annotations

import math

from promptdesk.core.protocol.sanitize import html_text
from promptdesk.core.experiments.arcs import Relationship, UNTONED
from promptdesk.core.protocol.lines import speech_line
from promptdesk.core.record.events import BaseEvent, SpeakEvent, ThinkEvent

PALETTE = ("#3b82f6", "#ef4444", "#10b981", "#f59e0b", "#8b5cf6", "#ec4899", "#14b8a6", "#f97316", "#6366f1",
           "#84cc16", "#06b6d4", "#a855f7")
OTHER = "#6b7280"
"""The colour of every tone past the palette's length (the legend still names each)."""
LABEL_CHARS = 17
CELL_CHARS = 11
"""How many characters of a tone fit one beat's cell of the arcs chart at 10px."""


def esc(text: object) -> str:
    """Text made inert for HTML."""
    return html_text(text)


def label(name: str, x: float, y: float, anchor: str = "start") -> str:
    """A name as SVG text, cut with an ellipsis past `LABEL_CHARS`, whole in its tooltip."""
    shown = name if len(name) <= LABEL_CHARS else name[:LABEL_CHARS - 1].rstrip() + "…"
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="11" text-anchor="{anchor}"><title>{esc(name)}</title>'
            f"{esc(shown)}</text>")


def tone_colours(rows: dict[str, list[str | None]]) -> dict[str, str]:
    """Each distinct tone's colour, in order of first appearance (beat by beat, actor by actor)."""
    seen: dict[str, str] = {}
    beats = max((len(r) for r in rows.values()), default=0)
    for beat in range(beats):
        for row in rows.values():
            tone = row[beat] if beat < len(row) else None
            if tone and tone not in seen:
                seen[tone] = PALETTE[len(seen)] if len(seen) < len(PALETTE) else OTHER
    return seen


def arcs_svg(rows: dict[str, list[str | None]], names: dict[str, str]) -> str:
    """One row per actor, one cell per beat coloured by its tone and naming it (cut to fit; whole
    in the cell's tooltip), in a frame that scrolls sideways for a long scene."""
    colours = tone_colours(rows)
    if not colours:
        return "<p>No tone recorded: the actors' speeches gave no <code>TONE:</code>.</p>"
    cell, name_w, row_h = 66, 110, 22
    beats = max(len(r) for r in rows.values())
    width, height = name_w + cell * beats, row_h * (len(rows) + 1) + 4
    parts = [f'<div style="overflow-x:auto"><svg role="img" aria-label="tone by beat" width="{width}" '
             f'height="{height}" xmlns="http://www.w3.org/2000/svg">']
    parts += [f'<text x="{name_w + b * cell + 2}" y="12" font-size="10" fill="#6b7280">beat {b}</text>'
              for b in range(beats)]
    for i, (slug, tones) in enumerate(rows.items()):
        y = (i + 1) * row_h
        parts.append(label(names.get(slug, slug), 0, y + 13))
        for beat, tone in enumerate(tones):
            if not tone:
                continue
            x = name_w + beat * cell
            shown = tone if len(tone) <= CELL_CHARS else tone[:CELL_CHARS - 1] + "…"
            parts.append(f'<rect x="{x}" y="{y}" width="{cell - 2}" height="{row_h - 4}" rx="3" fill="{colours[tone]}">'
                         f"<title>beat {beat}: {esc(tone)}</title></rect>"
                         f'<text x="{x + 3}" y="{y + 13}" font-size="10" fill="#fff">{esc(shown)}</text>')
    legend = "".join(f'<span style="color:{c}">■ {esc(t)}</span>' for t, c in colours.items())
    return "".join(parts) + f'</svg></div><div class="legend">{legend}</div>'


CROWD = 10
"""Past this many names the addressing graph is drawn as a crowd: small nodes on a circle that grows
with the cast, each name outside its node along the radius, and counts only in the arrows' tooltips
(the table below the graph gives them all), so no two names or nodes overlap, at 50 names too."""


def graph_svg(pairs: dict[str, dict[str, Relationship]], names: dict[str, str]) -> str:
    """The addressing graph: the cast on a circle, an arrow from speaker to addressee as thick as the
    speeches it carries, labelled with their count and the most frequent tone (a crowd's: in its
    tooltip, see `CROWD`)."""
    cast = list(dict.fromkeys([*names, *pairs, *(to for row in pairs.values() for to in row)]))
    if not any(pairs.values()):
        return "<p>No speech addressed to a cast member (no <code>TO:</code> naming one).</p>"
    crowd = len(cast) > CROWD
    node = 7 if crowd else 22
    radius = max(150.0, len(cast) * 24 / (2 * math.pi)) if crowd else 150.0
    size = round(2 * (radius + node + 8 + 6.5 * LABEL_CHARS)) if crowd else 420
    centre = size / 2
    angles = {slug: 2 * math.pi * i / len(cast) - math.pi / 2 for i, slug in enumerate(cast)}
    at = {slug: (centre + radius * math.cos(a), centre + radius * math.sin(a)) for slug, a in angles.items()}
    top = max(r.speeches for row in pairs.values() for r in row.values())
    parts = [f'<svg role="img" aria-label="addressing graph" width="{size}" height="{size}" '
             f'xmlns="http://www.w3.org/2000/svg"><defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" '
             f'markerUnits="userSpaceOnUse" markerWidth="10" markerHeight="10" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
             f'fill="#374151"/></marker></defs>']
    for speaker, row in pairs.items():
        for to, rel in row.items():
            parts.append(edge(at[speaker], at[to], rel, 1 + (2 if crowd else 5) * rel.speeches / top,
                              f"{names.get(speaker, speaker)} to {names.get(to, to)}", node, not crowd))
    for slug, (x, y) in at.items():
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{node}" fill="#e5e7eb" stroke="#374151"/>')
        parts.append(radial_label(names.get(slug, slug), x, y, angles[slug], node + 4) if crowd
                     else label(names.get(slug, slug), x, y + 4, "middle"))
    return "".join(parts) + "</svg>"


def radial_label(name: str, x: float, y: float, angle: float, gap: float) -> str:
    """A crowd graph's name, outside its node along the circle's radius (turned to read left to right
    on the left half), cut as `label` cuts it."""
    degrees = math.degrees(angle)
    left = math.cos(angle) < -1e-9
    tx, ty = x + gap * math.cos(angle), y + gap * math.sin(angle)
    turn = degrees + 180 if left else degrees
    text = label(name, tx, ty + 4, "end" if left else "start")
    return text.replace("<text ", f'<text transform="rotate({turn:.1f} {tx:.1f} {ty:.1f})" ', 1)


def edge(a: tuple[float, float], b: tuple[float, float], rel: Relationship, width: float, title: str,
         node: float = 22, labelled: bool = True) -> str:
    """One arrow, bowed to its left so that A→B and B→A stay apart, stopping at the node's rim, with
    its count and tone written beside it when `labelled` (always in its tooltip)."""
    (x1, y1), (x2, y2) = a, b
    dx, dy = x2 - x1, y2 - y1
    length = math.hypot(dx, dy) or 1.0
    ux, uy = dx / length, dy / length
    sx, sy, ex, ey = x1 + (node + 2) * ux, y1 + (node + 2) * uy, x2 - (node + 4) * ux, y2 - (node + 4) * uy
    bow = 30 if labelled else min(30.0, length / 6)
    cx, cy = (sx + ex) / 2 + bow * uy, (sy + ey) / 2 - bow * ux
    tone = next(iter(rel.tones), UNTONED)
    tones = ", ".join(f"{t} {n}" for t, n in rel.tones.items())
    text = (f'<text x="{cx:.1f}" y="{cy:.1f}" font-size="10" text-anchor="middle" fill="#111">'
            f"{rel.speeches} · {esc(tone[:14])}</text>") if labelled else ""
    return (f'<path d="M{sx:.1f},{sy:.1f} Q{cx:.1f},{cy:.1f} {ex:.1f},{ey:.1f}" fill="none" stroke="#374151" '
            f'stroke-opacity="{0.7 if labelled else 0.35}" stroke-width="{width:.1f}" marker-end="url(#arrow)">'
            f"<title>{esc(title)}: {rel.speeches} speech{'es' if rel.speeches != 1 else ''} ({esc(tones)})</title></path>"
            + text)


def relationships_rows(pairs: dict[str, dict[str, Relationship]], names: dict[str, str]) -> list[list[str]]:
    """The relationships as escaped table cells: from, to, speeches, tones."""
    return [[esc(names.get(s, s)), esc(names.get(t, t)), str(r.speeches),
             esc(", ".join(f"{tone} {n}" for tone, n in r.tones.items()))]
            for s, row in pairs.items() for t, r in row.items()]


def insights_html(events: list[BaseEvent], names: dict[str, str]) -> str:
    """Character insights (spec 004's "why did character X respond this way?"): per actor, folded, each
    beat's private thinking beside what it then said or did, with its tone and addressee."""
    out = []
    for slug, name in names.items():
        beats: dict[int, dict[str, list[str]]] = {}
        for event in events:
            if event.from_ != slug or event.beat is None:
                continue
            if isinstance(event, ThinkEvent):
                beats.setdefault(event.beat, {"think": [], "said": []})["think"].append(event.text)
            elif isinstance(event, SpeakEvent):
                said = "(silent)" if event.action == "silent" else speech_line(name, event)
                beats.setdefault(event.beat, {"think": [], "said": []})["said"].append(said)
        if not beats:
            continue
        thought = sum(bool(b["think"]) for b in beats.values())
        body = "".join(
            f'<div class="line"><b>beat {beat}</b>'
            + "".join(f'<p class="private" dir="auto">{esc(t)}</p>' for t in parts["think"])
            + "".join(f"<p>→ {esc(s)}</p>" for s in parts["said"]) + "</div>"
            for beat, parts in sorted(beats.items()))
        out.append(f"<details><summary>{esc(name)}: thinking (private, {thought}) beside each response"
                   f"</summary>{body}</details>")
    return "".join(out) or "<p>No thinking recorded.</p>"
