"""Helpers about this process, not about the dumps: `fork` (compute from a large model in a forked child and take
its result back) and `heap` (give freed memory back to the operating system after a large read)."""
