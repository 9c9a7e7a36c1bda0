"""Text from a model or a server, made safe to print on a terminal.

A reply is plain text to StreamScope: an escape sequence in it must not recolour, move or retitle the user's
terminal, and a bidirectional override must not reorder what the user reads. `safe(text)` shows every control
character (C0 and C1 except newline and tab, DEL, the bidi embedding/override/isolate marks and the line and
paragraph separators) as a visible `\\u` escape; everything else passes unchanged.
"""
from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def safe(text: str) -> str:
    """`text` with each unsafe character as `\\uXXXX` (newline and tab kept)."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
