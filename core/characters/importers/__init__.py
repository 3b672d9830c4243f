"""Characters people already have, made into Promptdesk characters.

`read_source(path)` recognises the file (a Character Card V1/V2/V3 as JSON, PNG, WebP or CharX, or a TinyTroupe
TinyPerson JSON) and returns an `Imported` character; `promptdesk.core.characters.importers.write` turns it into
`<slug>/profile.md` plus a scene snippet. Nothing here touches the network.
"""
