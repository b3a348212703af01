"""Running the tasks on Dask ``distributed``: an embedded cluster or one given by address.

With no client and no address, :func:`run_tasks` starts a ``LocalCluster`` of one
single-threaded worker process per core (a simulation is pure Python: threads would
share one interpreter lock) and stops it at the end.  Given a scheduler address
(``dask scheduler`` / ``dask worker`` started by hand, a ``dask-jobqueue``
``HTCondorCluster``) or a ``distributed.Client``, it uses that cluster and leaves it
running.

The inputs are scattered once to every worker; each task then carries only its
variant.  Dask reruns the tasks of a worker that dies on another worker; a variant's
result depends only on its inputs, so the rerun gives the same rows.  Results come
back as they finish and are handed to ``on_done`` at once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Optional

from .spec import SweepError
from .worker import Inputs, Outcome, Task, run_variant


@contextlib.contextmanager
def dask_client(client: Any = None, scheduler: Optional[str] = None, workers: Optional[int] = None) -> Iterator[Any]:
    """The client to run on: ``client`` itself, one connected to ``scheduler``, or one
    of an embedded ``LocalCluster`` with ``workers`` processes (default: one per core)."""
    if client is not None:
        yield client
        return
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ImportError(
            "matchmaker sweep needs Dask distributed: pip install 'dask[distributed]' (or the project's [sweep] extra)"
        ) from None
    if scheduler is not None:
        try:
            connected = Client(scheduler, timeout="30s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise SweepError(f"cannot reach the Dask scheduler: {' '.join(str(exc).split())}", file=scheduler) from None
        with connected as c:
            yield c
        return
    n = workers or os.cpu_count() or 1
    with (
        LocalCluster(
            n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
        ) as cluster,
        Client(cluster) as c,
    ):
        yield c


def run_tasks(client: Any, inputs: Inputs, tasks: Sequence[Task], on_done: Callable[[Outcome], None]) -> None:
    """Run every task on ``client``'s cluster, calling ``on_done`` as each finishes (in the
    order they finish).  A task Dask itself gives up on (its workers kept dying) is a
    failed outcome like any other."""
    if not tasks:
        return
    from distributed import as_completed

    # Keys of their own per run (hash=False, the run's token): a key just cancelled by an
    # interrupted run on the same cluster is never reused while the scheduler forgets it.
    shipped = client.scatter(inputs, broadcast=True, hash=False)
    run = uuid.uuid4().hex[:8]
    futures = {
        client.submit(run_variant, task, shipped, key=f"matchmaker-variant-{task.key}-{run}"): task for task in tasks
    }
    try:
        for future in as_completed(futures):
            task = futures[future]
            try:
                outcome = future.result()
            except Exception as exc:
                outcome = Outcome(
                    task.key, task.variant, status=2, error=f"dask: {type(exc).__name__}: {' '.join(str(exc).split())}"
                )
            future.release()
            on_done(outcome)
    finally:
        for future in futures:
            future.cancel()
        shipped.release()


__all__ = ["dask_client", "run_tasks"]
