"""JSON documents with one node replaced by a value of another JSON type: the bad input of the wrong-type tests
(adapters reading provider frames, the emulator reading request bodies)."""
from __future__ import annotations

import json

#: one value of each JSON type (bool and float apart from int, as a type test tells them apart)
WRONG_TYPES = [7, "s", None, [1], {"k": 1}, True, 1.5]


def json_paths(obj, path: tuple = ()):
    """Every node's path in `obj` (keys and list indexes), the root's (empty) first."""
    yield path
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from json_paths(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from json_paths(v, path + (i,))


def replaced(obj, path: tuple, value):
    """A copy of `obj` with the node at `path` replaced by `value` (the root itself for an empty path)."""
    if not path:
        return value
    obj = json.loads(json.dumps(obj))
    node = obj
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return obj
