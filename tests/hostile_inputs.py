"""Hostile inputs shared by the tests and the benches (bench/ imports this from the checkout)."""
from __future__ import annotations

import random


def distinct_words(n_bytes: int, seed: int = 1) -> str:
    """About `n_bytes` of random lower-case words, nearly all different: the prompt that made keyword extraction
    quadratic (each word was compared with every one kept before it)."""
    rng = random.Random(seed)
    out, size = [], 0
    while size < n_bytes:
        w = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9)))
        out.append(w)
        size += len(w) + 1
    return " ".join(out)
