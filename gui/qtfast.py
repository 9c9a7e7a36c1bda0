"""Qt's namespace with each member looked up once.

In PySide6 6.11 an attribute of `Qt` (`Qt.DisplayRole`, `Qt.AlignRight`, ...) costs about 5 µs on every access:
the namespace resolves it lazily each time. A table model answers `data()` for every cell and role on every
repaint (the Raw table while a firehose streams, the Compare table 10 times a second), and its role checks
alone then took most of its time. `Qt` here is a drop-in stand-in for the models and views on those paths:
the first access of a name looks it up in PySide6's `Qt` and keeps it as a plain attribute.
"""
from __future__ import annotations

from PySide6.QtCore import Qt as _Qt


class _CachedNamespace:
    def __init__(self, namespace) -> None:
        self._namespace = namespace

    def __getattr__(self, name: str):   # (only reached on the first access of each name)
        value = getattr(self._namespace, name)
        setattr(self, name, value)
        return value


Qt = _CachedNamespace(_Qt)
