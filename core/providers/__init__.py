"""Model backends behind one interface. SDKs are imported lazily, only when a provider is built."""
