"""Characters: loading a profile and journal by slug, searching the folders, front matter, where
journals live (`journal_store`), and importers of cards and personas.

May import `promptdesk.core.protocol` and `promptdesk.core.errors` only.
"""
