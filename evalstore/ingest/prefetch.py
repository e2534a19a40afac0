"""Producing the items of several sources on worker threads, a few sources ahead, in order.

The fast reader parses a file's blocks (Arrow and numpy release the GIL) while the caller stores or
evaluates the parts already read. :func:`prefetched` runs each source's iterator on a worker thread
and hands the items back in order, source by source, with at most ``depth`` items of a source
waiting: memory stays a few parts whatever the files' sizes. An exception of a source is raised
where its items stop, in the caller's thread.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

_END = object()


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error


def prefetched(
    sources: Sequence[Callable[[], Iterator[T]]], *, workers: int = 2, ahead: int = 4, depth: int = 2
) -> Iterator[Iterator[T]]:
    """For each source (a function giving an iterator), in order, an iterator over its items; each
    is done with once the next is asked for (its producer then stops). ``ahead`` sources are worked on at once, on
    ``workers`` threads; a source's producer waits while ``depth`` of its items wait for the caller."""
    stop = threading.Event()
    queues: dict[int, queue.Queue] = {}
    done: dict[int, threading.Event] = {}  # the caller has moved past the source

    def produce(i: int) -> None:
        q, left = queues[i], done[i]

        def put(item: object) -> bool:
            while not (stop.is_set() or left.is_set()):
                try:
                    q.put(item, timeout=0.05)
                    return True
                except queue.Full:
                    continue
            return False

        try:
            for item in sources[i]():
                if not put(item):
                    return
        except BaseException as e:  # handed to the caller, raised there
            put(_Failed(e))
            return
        put(_END)

    def consume(i: int) -> Iterator[T]:
        q = queues[i]
        while True:
            item = q.get()
            if item is _END:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield item

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        try:
            started = 0
            for i in range(len(sources)):
                while started < len(sources) and started < i + max(1, ahead):
                    queues[started] = queue.Queue(maxsize=max(1, depth))
                    done[started] = threading.Event()
                    pool.submit(produce, started)
                    started += 1
                yield consume(i)
                done[i].set()  # a source left before its end stops producing
                queues.pop(i, None)
        finally:
            stop.set()  # producers still running give up at their next item
