"""One adapter per wire format: SSE frames -> normalized events. The formats themselves: `core.wire.formats`."""
from __future__ import annotations

from core.wire.formats import wire_format


def adapter_for(format_name: str):
    """A new adapter instance for a wire format name; LocalProtocolError for an unknown name."""
    return wire_format(format_name).new_adapter()
