"""The `collaborate` format (spec 001): its section (`settings`), the JSON envelope (`envelope`),
the context window (`context`), the participants' personas (`personas`), their briefing, the one
guarded call (`ask`), the turn loop (`policy`), its state, record lines, flags and improviser part
(`improv`). `format.CollaborateFormat` is its registration.

May import the engine and the rooms below it; never another format.
"""
