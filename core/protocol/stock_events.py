"""The world events the offline improviser's judge suggests: fixed words of the product.

They are the engine's own words (`promptdesk.core.record.audit_material.engine_words`), public wherever
they appear: a journal that quotes one delivered in an earlier run ("And then, of all things: A plate
slides off the counter and shatters.") makes it no private text of that actor, so the same suggestion in
a later run is no leak of the journal.
"""

from __future__ import annotations

EVENTS = (
    (("office", "meeting", "deadline", "project", "client", "conference"),
     ("The phone on the conference table rings", "Someone knocks on the glass door")),
    (("kitchen", "breakfast", "tea", "coffee", "dinner"),
     ("The kettle begins to whistle", "A plate slides off the counter and shatters")),
    (("cafe", "café", "restaurant", "bar", "pub"),
     ("A waiter drops a tray of glasses nearby", "The music cuts out mid-song")),
    (("street", "park", "garden", "outside", "beach", "car"),
     ("It starts to rain, hard", "A car alarm goes off nearby")),
    (("home", "house", "living room", "apartment", "flat"),
     ("The doorbell rings", "The lights flicker and go out for a moment")),
)
"""Keywords of a scene's setting, and the two events suggested there."""
DEFAULT_EVENTS = ("A door slams somewhere down the hall", "A phone starts ringing and won't stop")
"""The events suggested where no keyword fits."""


def stock_events() -> list[str]:
    """Every world event the offline judge may suggest."""
    return [*(event for _, options in EVENTS for event in options), *DEFAULT_EVENTS]
