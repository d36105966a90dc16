"""The client's switches for the insight features (`initializationOptions`, `workspace/configuration`,
`didChangeConfiguration`), held by the server object (`app.HloLanguageServer.insight_settings`)."""

from __future__ import annotations


class InsightSettings:
    """The switches of the insight features; both on by default."""

    def __init__(self) -> None:
        self.inlay_hints = True
        self.code_lens = True

    def update(self, options) -> bool:
        """Apply ``{"inlayHints": {"enabled": b}, "codeLens": {...}}`` or dotted keys; True when it changed."""
        if not isinstance(options, dict):
            return False
        before = (self.inlay_hints, self.code_lens)
        for attr, key in (("inlay_hints", "inlayHints"), ("code_lens", "codeLens")):
            nested = options.get(key)
            value = nested.get("enabled") if isinstance(nested, dict) else options.get(key + ".enabled")
            if isinstance(value, bool):
                setattr(self, attr, value)
        return before != (self.inlay_hints, self.code_lens)
