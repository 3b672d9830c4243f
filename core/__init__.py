"""Promptdesk's engine: scenes, actors, providers, turn policies, coordinators and the recorder.

Nothing in this package imports `textual` or `rich`; the console and the batch runner talk to it
only through a session's event stream and control channel.
"""
