"""StreamScope's Qt layer: models and widgets over the core's objects (see gui/main_window.py)."""
from gui import qtcompat  # noqa: F401  (work-arounds for the Qt binding, applied on import)
