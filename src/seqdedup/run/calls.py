"""How a run is called: records taken as bytes (str ones encoded, never mixed with bytes)
and one call at a time, none after one was cut short."""

from __future__ import annotations

import _thread
from collections.abc import Iterable
from typing import TYPE_CHECKING, NoReturn, cast

if TYPE_CHECKING:
    from typing_extensions import TypeVar

    # A run's record type: bytes unless feed() is given str (Deduplicator[str])
    Record = TypeVar("Record", str, bytes, default=bytes)
else:
    from typing import TypeVar

    Record = TypeVar("Record", str, bytes)

if TYPE_CHECKING:
    pass


def bytes_records(
    records: Iterable[str] | Iterable[bytes], text: bool | None
) -> tuple[list[bytes], bool | None]:
    """The records as bytes (str ones encoded, as ``deduplicate`` does), and whether
    they were str: ``text``, what the run's earlier records were (None: none yet). A
    run's records are all str or all bytes. Bytes records are handed on as they are,
    without a copy or a look at each (the engines refuse anything else)."""
    batch = cast("list[str | bytes]", records if isinstance(records, list) else list(records))
    if not batch:
        return [], text
    given = isinstance(batch[0], str)
    if text is not None and given != text:
        _mixed(text)
    if not given:
        return cast("list[bytes]", batch), False
    encoded = []
    for record in batch:
        if not isinstance(record, str):
            _mixed(True)
        encoded.append(record.encode("utf-8", "surrogateescape"))
    return encoded, True


def _mixed(text: bool) -> NoReturn:
    was = "str" if text else "bytes"
    raise TypeError(
        f"Deduplicator.feed: a run's records are all str or all bytes (this one's: {was})"
    )


class OneCall:
    """One call at a time: a second thread is refused rather than let in to corrupt
    the state; a call cut short (KeyboardInterrupt, an error half-way) leaves the state
    incomplete, so every later call says so instead of going on wrongly."""

    def __init__(self) -> None:
        self._lock = _thread.allocate_lock()
        self._interrupted: str | None = None  # what cut an earlier call short

    def __enter__(self) -> None:
        if self._interrupted is not None:
            raise RuntimeError(
                f"this Deduplicator was interrupted in an earlier call ({self._interrupted}); "
                "its state is incomplete: make a new one"
            )
        if not self._lock.acquire(blocking=False):
            raise RuntimeError(
                "this Deduplicator is in use by another call (another thread?): "
                "use one per thread, or a lock around its calls"
            )

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is not None:
            self._interrupted = kind.__name__
        self._lock.release()
