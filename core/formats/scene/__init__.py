"""The `scene` format (specs 000, 003, 004): parallel beats (`parallel`) or sequential turns
(`sequential`) on what both share (`common`), the notes on its context window (`context`), and
restoring a killed scene from its log (`restore`). `format.SceneFormat` is its registration.

May import the engine and the rooms below it; never another format.
"""
