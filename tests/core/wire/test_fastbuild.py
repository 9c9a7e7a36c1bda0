"""core.fastbuild: built events are the very objects the dataclass constructor makes, and stay frozen."""
from __future__ import annotations

import dataclasses
import pickle

import pytest

from core.wire import events as ev
from core.wire.fastbuild import builder

SAMPLES = [
    (ev.TextDelta, (3, 1, "héllo")),
    (ev.ThinkingDelta, (0, 0, "")),
    (ev.ToolArgsDelta, (7, 2, '{"a":')),
    (ev.SignatureDelta, (1, 1, "sig")),
    (ev.RefusalDelta, (2, 0, "no")),
    (ev.Keepalive, (9,)),
    (ev.Usage, (10, 20, 30, None, None, 5, {"raw": 1})),
    (ev.Usage, ()),
    (ev.UsageUpdated, (4, ev.Usage(1, 2, 3), "cumulative")),
    (ev.UsageUpdated, (4, ev.Usage(1, 2, 3))),
    (ev.BlockStarted, (0, 0, "tool_call", 0, "call_1", "get_weather")),
    (ev.Diagnostic, (5, "code", "message")),
]


@pytest.mark.parametrize("cls,args", SAMPLES, ids=lambda v: getattr(v, "__name__", None) or repr(v)[:30])
def test_built_instance_equals_the_constructed_one(cls, args):
    built = builder(cls)(*args)
    made = cls(*args)
    assert type(built) is cls
    assert built == made
    try:
        expected_hash = hash(made)
    except TypeError:  # a field holds a dict (Usage.raw): neither is hashable
        with pytest.raises(TypeError):
            hash(built)
    else:
        assert hash(built) == expected_hash
    assert repr(built) == repr(made)
    assert dataclasses.asdict(built) == dataclasses.asdict(made)
    assert pickle.loads(pickle.dumps(built)) == made


def test_built_instance_is_frozen():
    e = builder(ev.TextDelta)(1, 2, "x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.text = "y"  # type: ignore[misc]


def test_defaults_are_the_dataclass_defaults():
    assert builder(ev.BlockStarted)(1, 2, "text") == ev.BlockStarted(1, 2, "text")
    assert builder(ev.UsageUpdated)(1, None).reporting == "final"


def test_one_builder_per_class():
    assert builder(ev.TextDelta) is builder(ev.TextDelta)


def test_refuses_what_it_cannot_build():
    @dataclasses.dataclass(frozen=True, slots=True)
    class WithFactory:
        items: list = dataclasses.field(default_factory=list)

    with pytest.raises(TypeError):
        builder(WithFactory)

    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    with pytest.raises((TypeError, AttributeError)):
        builder(NoSlots)
