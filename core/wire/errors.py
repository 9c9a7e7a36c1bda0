"""The wire layer's one exception: misuse of its API by the caller.

Bad peer data never raises here: everything a provider gets wrong is reported as a `Diagnostic` or `InBandError`
*event*, so a pane keeps what it received. `LocalProtocolError` (h11's name for the same idea) is raised only for
a local mistake: feeding a decoder after its end of input, or naming a wire format that does not exist.
"""


class LocalProtocolError(Exception):
    """The caller misused a sans-IO decoder or named an unknown wire format (never raised for bad peer data)."""
