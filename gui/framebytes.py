"""The Raw tab's bytes view: the selected SSE item's raw bytes, as hex or as text, cut where the network chunks
that carried it begin and end (a frame split across chunks shows each part under its chunk).

Nothing is parsed here: the item keeps its raw bytes and stream offset (`core.wire.sse`), the run keeps every chunk
with its arrival time (`core.live.recorder.ProviderRun.chunks`), and `RunView.chunks_of` says which chunk carried
which part. `bytes_text(view, row, mode)` returns the plain text; `DetailModeBar` picks the mode.
"""
from __future__ import annotations

import re

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QButtonGroup, QHBoxLayout, QToolButton, QWidget

from core.live.recorder import TIMING_RECORDED
from core.live.summary import plural, visible_controls

DECODED, HEX, TEXT = "decoded", "hex", "text"
MODES = ((DECODED, "Decoded", "The payload pretty-printed and the normalized events it produced"),
         (HEX, "Hex", "The raw bytes in hex, under the network chunk(s) that carried them"),
         (TEXT, "Bytes", "The raw bytes as text (line ends and controls made visible), under the network "
                         "chunk(s) that carried them"))
MAX_BYTES_SHOWN = 64 * 1024   # a bigger item is shown up to here (Copy copies all of it)
HEX_PER_LINE = 16


def _ms(view, t_ns: int) -> str:
    ms = view.ms(t_ns)
    if view.run.timing != TIMING_RECORDED:    # (a recording that held no per-chunk time: not known)
        return "time not recorded"
    return "?" if ms is None else f"{ms:,.1f} ms"


def chunks_text(view, row: int) -> list[str]:
    """Which network chunk(s) carried SSE item `row`: one line each, the split said first."""
    item = view.run.decoder.items[row]
    spans = view.chunks_of(row)
    size = len(item.raw)
    if not spans:
        return ["(its network chunks are not known: a capture without them)"]
    lines = [f"split across {len(spans)} network chunks:" if len(spans) > 1 else "carried by one network chunk:"]
    for s in spans:
        part = s.end - s.start
        lines.append(f"  chunk {s.chunk} · {_ms(view, s.t_ns)} · bytes {s.item_start:,}–{s.item_start + part:,} "
                     f"of {size:,} (chunk bytes {s.start:,}–{s.end:,} of {view.chunk_size(s.chunk):,})")
    return lines


def _hex_lines(data: bytes, base: int) -> list[str]:
    out = []
    for i in range(0, len(data), HEX_PER_LINE):
        piece = data[i:i + HEX_PER_LINE]
        hexes = " ".join(f"{b:02x}" for b in piece)
        if len(piece) > 8:
            hexes = hexes[:23] + " " + hexes[23:]
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in piece)
        out.append(f"{base + i:08x}  {hexes:<49}  |{text}|")
    return out


_LINE_END = re.compile(r"\r\n|\r|\n")
_SHOWN_END = {"\r\n": "\\r\\n\n", "\r": "\\r\n", "\n": "\\n\n"}


def _text_lines(data: bytes) -> list[str]:
    """Bytes as text: UTF-8 where valid (a character cut by a chunk boundary shows as its \\x bytes), every
    line end shown (\\r, \\n, \\r\\n) before the real line break, tabs and other controls escaped."""
    s = data.decode("utf-8", "backslashreplace").replace("\t", "\\t")
    s = _LINE_END.sub(lambda m: _SHOWN_END[m.group()], s)
    return visible_controls(s).split("\n")


def bytes_text(view, row: int, mode: str = HEX) -> str:
    """SSE item `row`'s raw bytes as hex (`HEX`) or text (`TEXT`), cut at the chunks that carried it."""
    item = view.run.decoder.items[row]
    raw = item.raw
    is_frame = hasattr(item, "event")
    what = f"frame {item.n} · {item.event}" if is_frame else f"comment line (before frame {item.n})"
    lines = [f"{what} · {plural(len(raw), 'byte')} at stream offset {item.offset:,}"]
    lines += chunks_text(view, row)
    spans = view.chunks_of(row) or [None]
    shown = 0
    for s in spans:
        lo, hi = (0, len(raw)) if s is None else (s.item_start, s.item_start + s.end - s.start)
        if shown >= MAX_BYTES_SHOWN:
            break
        hi = min(hi, lo + MAX_BYTES_SHOWN - shown)
        if s is not None:
            lines.append("")
            lines.append(f"── chunk {s.chunk} · {_ms(view, s.t_ns)} ──")
        piece = raw[lo:hi]
        lines += _hex_lines(piece, lo) if mode == HEX else _text_lines(piece)
        shown += hi - lo
    if len(raw) > shown:
        lines.append(f"… {len(raw) - shown:,} more bytes (Copy copies all of them)")
    if mode == TEXT and lines[-1] == "":
        lines.pop()
    return "\n".join(lines)


class DetailModeBar(QWidget):
    """Three toggles over the Raw tab's detail: Decoded (payload and events), Hex, Bytes (as text).

    Signals:
        modeChanged(str): DECODED, HEX or TEXT.
    """

    modeChanged = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.group = QButtonGroup(self)
        self.group.setExclusive(True)
        self.buttons: dict[str, QToolButton] = {}
        for mode, label, tip in MODES:
            b = QToolButton(self)
            b.setText(label)
            b.setToolTip(tip)
            b.setCheckable(True)
            b.setAutoRaise(True)
            self.group.addButton(b)
            self.buttons[mode] = b
            lay.addWidget(b)
            b.toggled.connect(lambda on, m=mode: on and self.modeChanged.emit(m))
        lay.addStretch(1)
        self.buttons[DECODED].setChecked(True)

    @property
    def mode(self) -> str:
        return next(m for m, b in self.buttons.items() if b.isChecked())

    def set_mode(self, mode: str) -> None:
        self.buttons[mode].setChecked(True)
