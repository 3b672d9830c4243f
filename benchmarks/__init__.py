"""The performance harness: `make bench` prints one `NAME: VALUE` line per figure.

Its runs read and write character journals in a store of their own (`PROMPTDESK_JOURNAL_STORE`, an
empty temporary folder unless it is already set, inherited by the processes they start), never in
`.promptdesk/journals/` of the checkout: a scene played there by hand would otherwise lengthen the
briefings the figures are measured on.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

if "PROMPTDESK_JOURNAL_STORE" not in os.environ:
    _STORE = tempfile.mkdtemp(prefix="promptdesk-bench-journals-")
    os.environ["PROMPTDESK_JOURNAL_STORE"] = _STORE
    atexit.register(shutil.rmtree, _STORE, True)
