"""Building frozen slotted dataclass instances on hot paths, without the generated `__init__`'s cost.

A frozen dataclass's `__init__` stores each field through `object.__setattr__` (to get past its own
`__setattr__`), which makes a three-field event cost about 400 ns; the decoder builds one or more per SSE frame.
`builder(cls)` returns a positional constructor that fills a plain slotted *twin* class (same slots, so the same
memory layout) and then re-classes the object as `cls`: the result is an ordinary frozen `cls` instance
(equality, hash, repr, `dataclasses` helpers and immutability all hold) for about 160 ns.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

_builders: dict[type, Callable] = {}


def twin_class(cls: type) -> type:
    """A plain class with `cls`'s slots and a positional `__init__`, whose instances can become `cls`.

    `inst.__class__ = cls` is allowed because the slot layout is identical.
    """
    names = cls.__slots__
    args = ", ".join(names)
    body = "".join(f"\n    self.{name} = {name}" for name in names) or "\n    pass"
    ns: dict = {}
    exec(f"def __init__(self, {args}):{body}", ns)
    return type(f"_{cls.__name__}Builder", (), {"__slots__": names, "__init__": ns["__init__"]})


def builder(cls: type) -> Callable:
    """A fast positional constructor for the frozen, slotted dataclass `cls` (same fields, order and defaults).

    Only for fields whose defaults are immutable values (no `default_factory`), which holds for the event types.
    """
    made = _builders.get(cls)
    if made is not None:
        return made
    fields = dataclasses.fields(cls)
    if tuple(f.name for f in fields) != tuple(cls.__slots__):
        raise TypeError(f"{cls.__name__}: builder() needs a slotted dataclass whose slots are its fields")
    ns: dict = {"_new": object.__new__, "_twin": twin_class(cls), "_cls": cls}
    params = []
    for i, f in enumerate(fields):
        if f.default_factory is not dataclasses.MISSING:
            raise TypeError(f"{cls.__name__}.{f.name}: builder() does not support default_factory")
        if f.default is dataclasses.MISSING:
            params.append(f.name)
        else:
            ns[f"_d{i}"] = f.default
            params.append(f"{f.name}=_d{i}")
    body = "".join(f"\n    o.{f.name} = {f.name}" for f in fields)
    exec(f"def {cls.__name__}_builder({', '.join(params)}):\n    o = _new(_twin){body}\n"
         f"    o.__class__ = _cls\n    return o", ns)
    made = _builders[cls] = ns[f"{cls.__name__}_builder"]
    made.__doc__ = f"Build a {cls.__name__} (positional, as its constructor; see core.fastbuild)."
    return made
