"""The one exception of the selector engine."""


class CelError(Exception):
    """A selector failed to compile, or failed at runtime (no such key, cost limit, non-bool result)."""
