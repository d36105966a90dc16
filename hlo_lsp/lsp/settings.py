"""The client's switches for the insight features (`initializationOptions`, `workspace/configuration`,
`didChangeConfiguration`), held by the server object (`app.HloLanguageServer.insight_settings`)."""

from __future__ import annotations


class InsightSettings:
    """The switches of the insight features; both on by default."""

    def __init__(self) -> None:
        self.inlay_hints = True
        self.code_lens = True
        self.oom_dump_folder: str | None = None  # ``oom.dumpFolder``: where out-of-memory reports' dumps are

    def _oom_folder(self, options: dict) -> None:
        nested = options.get("oom")
        value = nested.get("dumpFolder") if isinstance(nested, dict) else options.get("oom.dumpFolder")
        if isinstance(value, str):
            self.oom_dump_folder = value.strip() or None

    def update(self, options) -> bool:
        """Apply ``{"inlayHints": {"enabled": b}, "codeLens": {...}, "oom": {"dumpFolder": "..."}}`` or dotted
        keys; True when a switch changed (the dump folder is applied by the server whenever it differs)."""
        if not isinstance(options, dict):
            return False
        before = (self.inlay_hints, self.code_lens)
        for attr, key in (("inlay_hints", "inlayHints"), ("code_lens", "codeLens")):
            nested = options.get(key)
            value = nested.get("enabled") if isinstance(nested, dict) else options.get(key + ".enabled")
            if isinstance(value, bool):
                setattr(self, attr, value)
        self._oom_folder(options)
        return before != (self.inlay_hints, self.code_lens)
