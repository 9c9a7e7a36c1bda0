"""The one exception type for bad peer data.

Almost everything a provider gets wrong is reported as a `Diagnostic` or `StreamError` *event*, so a pane keeps
what it received. `ProtocolError` is raised only where going on is impossible: misuse of a decoder after its
end of input, or an unknown wire format name.
"""


class ProtocolError(Exception):
    """Bad peer data or misuse of a sans-IO decoder."""
