"""Features over the core model, one module each; plain data in and out (no protocol types)."""
