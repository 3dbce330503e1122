"""`reader.__all__` is the public surface: each name resolves, and every result type a
method of Reader, or of the objects it hands out, returns is among them."""

from __future__ import annotations

import inspect
import re

import reader
from reader.facade import Library, Paper, Questions, Reader, ReviewQueue


def test_every_public_name_resolves_to_what_it_names():
    for name in reader.__all__:
        value = getattr(reader, name)
        assert getattr(value, "__name__", None) == name, name


def test_the_result_types_named_in_readers_docstrings_are_public():
    named = set()
    for surface in (Reader, Paper, Library, ReviewQueue, Questions):
        for _, method in inspect.getmembers(surface, inspect.isfunction):
            named |= set(re.findall(r"-> (?:list\[)?([A-Z][A-Za-z]+)", method.__doc__ or ""))
    assert named, "Reader's methods say what they return"
    assert named - set(reader.__all__) == set()


def test_an_unknown_name_is_an_attribute_error():
    try:
        reader.NoSuchThing
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("reader.NoSuchThing resolved")
