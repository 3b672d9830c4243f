"""Model backends behind one interface (`base`), built from a `ProviderSpec` (`spec`, `registry`),
with retries (`retry`), rate-limit headers and limiters (`rate_headers`, `ratelimit`), the waits a
response header asks for, capped and said once (`waits`), and prices (`pricing`). SDKs are imported
lazily, only when a provider is built. The offline improviser's provider is the improviser's own
(`promptdesk.core.improv.provider`).

May import `promptdesk.core.clock` and `promptdesk.core.errors` only.
"""
