"""Text from a model or a server, made safe to print on a terminal.

A reply is plain text to StreamScope: an escape sequence in it must not recolour, move or retitle the user's
terminal, and a bidirectional override must not reorder what the user reads. `safe(text)` shows every control
character (C0 and C1 except newline and tab, DEL, the bidi embedding/override/isolate marks and the line and
paragraph separators) as a visible `\\u` escape; everything else passes unchanged.
"""
from __future__ import annotations

from core.live.summary import visible_controls as safe  # noqa: F401  (the command line's name for it)
