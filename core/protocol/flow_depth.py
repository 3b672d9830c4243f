"""How deep a YAML text's flow collections (`[...]`, `{...}`) nest, read from the text alone.

Promptdesk's own nesting bound must hold whatever YAML library is installed. libyaml refuses deep
flow nesting itself, and its scanner reads a run of `[[[[` ahead before any event reaches
`bounded.check_yaml`: with PyYAML 6.0.4 a file nested 1,000 deep failed with libyaml's words instead
of Promptdesk's (and lenient readers such as front matter then took it for no front matter). So the
flow nesting is measured here first, in one linear pass, before the library is asked.

The pass follows the YAML rules that decide whether a bracket is structure: in flow context every
bracket outside a quoted scalar or a comment is; in block context a bracket opens a collection only
where a node starts (the line's first character, after `- `, `? `, `: `, or after an `&anchor` or
`!tag`), never inside a plain scalar. Quoted scalars (over several lines too), comments and block
scalars (`|`, `>`) are skipped. Pure function, no I/O.
"""

from __future__ import annotations

OPENERS = "[{"
CLOSERS = "]}"


def deepest_flow(text: str, limit: int) -> int | None:
    """The 1-based line where flow collections first nest deeper than `limit`, or None if they never do."""
    depth = 0
    quote = ""
    block_indent = -1
    """Indentation of the line that opened a block scalar (-1: not in one)."""
    for number, line in enumerate(text.splitlines(), 1):
        indent = len(line) - len(line.lstrip(" "))
        if block_indent >= 0:
            if not line.strip() or indent > block_indent:
                continue
            block_indent = -1
        at_start, i, n = not quote, indent if not quote else 0, len(line)
        if not quote and depth == 0 and line.startswith(("---", "...")) and line[3:4] in ("", " "):
            continue
        while i < n:
            ch = line[i]
            if quote:
                if quote == '"' and ch == "\\":
                    i += 2
                    continue
                if ch == quote:
                    if quote == "'" and line[i + 1:i + 2] == "'":
                        i += 2
                        continue
                    quote, at_start = "", False
                i += 1
                continue
            if ch == "#" and (i == 0 or line[i - 1] in " \t"):
                break
            if ch in " \t":
                i += 1
                continue
            if at_start and ch in "'\"":
                quote, at_start = ch, False
            elif (depth or at_start) and ch in OPENERS:
                depth += 1
                if depth > limit:
                    return number
                at_start = True
            elif depth and ch in CLOSERS:
                depth -= 1
                at_start = False
            elif depth and ch == ",":
                at_start = True
            elif ch in "-?:" and line[i + 1:i + 2] in ("", " ", "\t") and (ch == ":" or at_start):
                at_start = True
            elif at_start and ch in "&!":
                while i < n and line[i] not in " \t":
                    i += 1
                continue
            elif at_start and ch in "|>" and depth == 0:
                block_indent = indent
                break
            else:
                at_start = False
            i += 1
    return None
