"""hlo-lsp: a language server and CLI for XLA's HLO text and buffer-assignment dumps."""

__version__ = "0.1.0"
