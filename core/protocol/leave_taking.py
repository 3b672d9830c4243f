"""Is this line a leave-taking? The conservative close rules of spec 000 ("Natural close").

A line closes the scene only when taking leave is its act: a farewell or a thanks that ends the
meeting, said as the line's own sentence, or a stage direction in which the speaker exits
("stands", "puts on her coat", "walks out"). Close words inside reported speech, a question, a
negation, a memory or an object's action ("*rain leaves streaks*", "*leaves the report on the
table*") never count. When unsure, the scene continues.
"""

from __future__ import annotations

import re

_LEAD = r"^(?>(?:well|ok(?:ay)?|right|alright|all right|so|anyway|then|now|listen|look|oh|ah|and|but|yes|yeah|no|"\
        r"sorry|really|honestly|truly|again|both|everyone|folks|friends)[,.!]?\s+|(?-i:[^\W\d_a-z][^\W\d_]*),\s+)*"
"""Lead words and names before the act. Each is taken once (an atomic group): "Well, " reads as a lead
word and as a name, the same characters either way, so trying both would double the reading per word."""
_END = r"(?:\s+(?:now|then|too|home|already|for now|for today|for real|for the night|tonight|"\
       r"with your (?:day|evening|afternoon|morning|night|week)))?\s*(?:$|[,.!;:\u2014\u2013-])"
FAREWELLS = re.compile(_LEAD + r"(?:goodbye|good-bye|bye(?: now)?|farewell|good ?night|safe travels|take care"
                       r"|see you (?:tomorrow|later|soon|around|next week|on monday|monday)"
                       r"|i'?ll let you (?:go|get on|get back to it)|i should (?:let you get on|head out|get going|"
                       r"be going|be off|go|leave)|i'?d better (?:go|get going|be going|be off|head out)"
                       r"|i'?m (?:off|heading out|going to head out)|i (?:have|need|must|'?ve got) to (?:go|run|head out)|gotta (?:go|run)"
                       r"|time (?:for me )?to go|let'?s call it a day|let'?s leave it there)" + _END, re.I)
THANKS = re.compile(_LEAD + r"(?:thank you|thanks)(?:,)? (?:both|all|everyone|all of you|both of you)"
                    r"(?: (?:for (?:this|everything|today|your time|listening|hearing me out|the conversation"
                    r"|being (?:honest|here)|that|all of it)|again|so much|truly|really))*" + _END, re.I)
NOT_THE_ACT = re.compile(r"\b(?:said|says|say|saying|told|tell|asked|wrote|whispered|replied|remember|remembered"
                         r"|used to|years ago|back then|last time|that (?:night|day|morning)|when i was|never|not"
                         r"|don'?t|didn'?t|won'?t|can'?t|couldn'?t|wouldn'?t|shouldn'?t|if|unless|before|until)\b",
                         re.I)
AGENDA = re.compile(r"^(?:(?:let'?s|let us|shall we|we should|we need to|i want to) (?:start|begin|get started|go over|look at|"
                    r"talk about|discuss|move on|turn to|go through|get back|get into|review|continue)"
                    r"|now|so|first|next|moving on|back to|where were we|before (?:we|i|you)"
                    r"|but|one more thing|anyway,? (?:about|back)|wait|hold on|hang on|actually|on second thought)\b", re.I)
"""A sentence that opens or continues business: after it, an earlier farewell or thanks is not the act."""
STAND = re.compile(r"^" + r"(?:(?:he|she|they|(?-i:[^\W\d_a-z][^\W\d_]*))\s+)?(?:\w+ly\s+)?(?:stands|gets up|rises)(?:\s+up)?\s*[.!]?$",
                   re.I)
"""Standing up and nothing more: an exit only when it is the direction's last word."""
_QUOTES = {"\"": "\"", "\u201c": "\u201d", "'": "'", "\u2018": "\u2019"}
"""Each opening quote and its closing one: a quoted span is an opening quote up to the next closing one
(a straight single quote only between non-letters, so that "don't" opens nothing)."""
_OPENING = re.compile("[\"'\u201c\u2018]")
_WORD = re.compile(r"\w")
SENTENCES = re.compile(r"[^.!?\u2026\u3002\uff01\uff1f\u0964\u061f]+[.!?\u2026\u3002\uff01\uff1f\u0964\u061f]*")
_ASKED = ("?", "\uff1f", "\u061f")
"""A question's mark: Latin, full-width, Arabic."""
_FAREWELL_WORDS = (
    "さようなら|さよなら|じゃあね|じゃあまた|ではまた|また明日|また今度|お先に失礼します|失礼します|おやすみなさい"
    "|再见|再會|再会|拜拜|明天见|回头见|我先走了|告辞|晚安"
    "|안녕히 계세요|안녕히 가세요|안녕히 계십시오|잘 가|잘 있어|다음에 봐요|또 봐요"
    "|до свидания|до встречи|до завтра|прощайте|прощай|пока|мне пора|спокойной ночи"
    "|مع السلامة|وداعا|وداعًا|إلى اللقاء|تصبح على خير|להתראות|ביי|לילה טוב|अलविदा|फिर मिलेंगे|शुभ रात्रि"
    "|adiós|adios|hasta luego|hasta mañana|hasta pronto|nos vemos|au revoir|à bientôt|à demain|bonne nuit"
    "|auf wiedersehen|tschüss|tschüs|bis morgen|bis bald|gute nacht|arrivederci|a domani|buonanotte"
    "|tchau|adeus|até logo|até amanhã|boa noite")
_APART = r"[,\u3001\uff0c\u060c]"
"""A comma of any script, setting an address or a lead word off the farewell."""
FOREIGN_FAREWELL = re.compile(
    rf"^(?:[^\s,\u3001\uff0c\u060c]{{1,24}}{_APART}\s*)?(?:{_FAREWELL_WORDS})(?:(?:{_APART}\s*|\s+\u064a\u0627\s+)[^\W\d_][^,.!?\u3002\uff01]{{0,30}})?"
    r"[\s.!\u2026\u3002\uff01\u0964~\u301c\uff5e]*$", re.I)
"""A farewell in another language as a whole sentence (`さようなら。`, `李明、再见！`, `До свидания, Ольга.`,
`مع السلامة`): only the farewell, with at most an address or a lead word set off by a comma (or an Arabic
address by its vocative يا, `مع السلامة يا ليلى`), as the line's
last sentence. Words that also greet (`ciao`, `שלום`, `안녕`) are left out: when unsure, the scene continues."""

_ADVERB = r"(?>(?:\w+ly|then|finally|at last|without a word|without another word),?\s+)*"
"""Adverbs before the act, each taken once (`finally` is also a `…ly` word: two readings of one word)."""
_SUBJECT = r"(?:(?:he|she|they|(?-i:[^\W\d_a-z][^\W\d_]*))\s+)?"
_POSS = r"(?:(?:his|her|their|my)\s+)?"
_GONE = r"(?:\s+(?:of\s+)?(?:the|this)\s+(?:room|office|building|house|kitchen|table|meeting|café|cafe|bar|flat|apartment|door))?"
EXITS = re.compile(
    r"^" + _SUBJECT + _ADVERB + r"(?:"
    r"(?:stands|gets up|rises)(?:\s+up)?(?:\s+to\s+(?:leave|go))?(?:\s+and\s+(?:(?:leaves|goes|walks out|exits|heads for the door)"
    + _GONE + r"|puts on " + _POSS + r"(?:coat|jacket|scarf)))?"
    r"|(?:leaves|exits|walks out|storms out|steps out|goes out|heads out)" + _GONE +
    r"|heads (?:for|to|toward|towards) the (?:door|exit)"
    r"|puts on " + _POSS + r"(?:coat|jacket|scarf)(?:\s+and\s+(?:leaves|goes|walks out|heads for the door))?"
    r"|(?:picks up|grabs|collects|gathers) " + _POSS + r"(?:coat|jacket|bag|keys|things)\s+and\s+"
    r"(?:leaves|goes|walks out|heads (?:for|to) the door|exits)" + _GONE +
    r")\s*(?:$|[,.;!\u2014\u2013-])", re.I)
STAGE = re.compile(r"\*\[?([^*\]]+)\]?\*")


_EDGE_DIRECTIONS = re.compile(r"^(?:\s*\*\[?[^*\]]+\]?\*)+|(?:\*\[?[^*\]]+\]?\*\s*)+$")
"""Stage directions opening or closing a speech written in spec 000's own form, without a header
(`*[stands and puts on her coat]* Thank you both, this was generous.`): not words, so they never hide
the farewell after them. One inside a sentence stays (`This is *not* goodbye.`): it may be emphasis."""


_ONE_QUOTE = re.compile(r'"([^"]*)"|\u201c([^\u201c\u201d]*)\u201d')


def _spoken(words: str) -> str:
    """The words a speech says, its opening or closing stage directions taken off; when what is left
    is one quoted string (a gesture outside the header: `[TO: Bob] *waves* "Goodbye, Bob."`), its
    inside, which is the line itself, not a quotation inside it."""
    text = _EDGE_DIRECTIONS.sub(" ", words).strip()
    whole = _ONE_QUOTE.fullmatch(text)
    return next((g for g in whole.groups() if g is not None), text) if whole else text


def is_farewell(words: str) -> bool:
    """The spoken words take leave: a farewell or closing thanks as a sentence's act, outside
    quotes, never asked, negated or remembered, and the line does not end on a question."""
    plain = unquoted(_spoken(words or "")).strip()
    sentences = [s.strip() for s in SENTENCES.findall(plain) if s.strip()]
    if not sentences or sentences[-1].endswith(_ASKED):
        return False
    if FOREIGN_FAREWELL.match(sentences[-1]):
        return True
    business = max((i for i, s in enumerate(sentences) if AGENDA.match(s)), default=0)
    """The last sentence that opens or continues business: a leave-taking counts from there on."""
    return any(_is_leave_sentence(s) for s in sentences[business:])


def unquoted(text: str) -> str:
    """The text with each quoted span replaced by a space, read once from left to right: where a quote
    never closes, the rest of the text is not searched again from every later opening quote."""
    out: list[str] = []
    start = at = 0
    closing_at: dict[str, int] = {}
    """Per kind of quote, where its next closing quote was found (-1: none after that point)."""
    while (opening := _OPENING.search(text, at)) is not None:
        i = opening.start()
        mark = text[i]
        at = i + 1
        if mark == "'" and i and _WORD.match(text, i - 1):
            continue
        end = closing_at.get(mark)
        if end is None or -1 < end <= i:
            end = closing_at[mark] = text.find(_QUOTES[mark], i + 1)
        if end == -1 or (mark == "'" and _WORD.match(text, end + 1)):
            continue
        out += [text[start:i], " "]
        start = at = end + 1
    return "".join(out) + text[start:]


RETRACTED = re.compile(r"\b(?:wait|hold on|hang on|one more thing|actually|on second thought)\b", re.I)
"""Taken back in the same sentence after the farewell ("I'll let you go - no, wait, one more thing.")."""


def _is_leave_sentence(sentence: str) -> bool:
    if sentence.endswith("?"):
        return False
    match = FAREWELLS.match(sentence) or THANKS.match(sentence)
    return bool(match) and not NOT_THE_ACT.search(sentence) and not RETRACTED.search(sentence, match.end())


def is_exit(direction: str) -> bool:
    """A stage direction in which the speaker exits ("stands", "walks out", "puts on her coat")."""
    clauses = [c.strip() for c in re.split(r"[;,]\s*(?:then\s+)?", direction or "") if c.strip()]
    return any(EXITS.match(c) and not NOT_THE_ACT.search(c) and (i == len(clauses) - 1 or not STAND.match(c))
               for i, c in enumerate(clauses))


def stage_directions(raw: str) -> list[str]:
    """The `*…*` (or `*[…]*`) stage directions inside a speech as written."""
    return [d.strip() for d in STAGE.findall(raw or "")]


def takes_leave(words: str, nonverbal: str | None = None, raw: str | None = None) -> bool:
    """True when the line's act is taking leave: in its words, its gesture or its stage directions."""
    directions = ([nonverbal] if nonverbal else []) + stage_directions(raw or "")
    return is_farewell(words) or any(is_exit(d) for d in directions)
