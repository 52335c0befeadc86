"""Sequences whose items are made when asked: a few of a million are read, so none is
made ahead (a unit's last record, a record sliced from a buffer, a chain of key ids)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import TypeVar, overload

T_co = TypeVar("T_co", covariant=True)


class LazySequence(Sequence[T_co]):
    """A ``Sequence`` that makes item ``k`` with :meth:`_item` (``0 <= k < len``) when it
    is asked for; a negative index counts from the end, a slice gives a list."""

    @abstractmethod
    def _item(self, index: int) -> T_co: ...

    @overload
    def __getitem__(self, index: int) -> T_co: ...
    @overload
    def __getitem__(self, index: slice) -> list[T_co]: ...
    def __getitem__(self, index: int | slice) -> T_co | list[T_co]:
        if isinstance(index, slice):
            return [self._item(k) for k in range(*index.indices(len(self)))]
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError(index)
        return self._item(index)
