"""The `collaborate` format's parts (spec 001): the JSON envelope, the context window, the
participants' personas and the one guarded call. The turn loop itself is `core.policies.collaborate`."""
