"""Celery tasks: thin, they take a run id and call a service."""

from __future__ import annotations

from typing import Any

from celery.signals import worker_ready
from django.conf import settings

from allocation.services import RUN_TASK, whatif_run_execute
from allocation.whatif.shards import SHARD_TASK, shard_execute
from allocation.worker import start_reaper, start_warmer
from dradash.celery import app


@app.task(name=RUN_TASK, acks_late=True, ignore_result=True)
def run_whatif(run_id: str) -> None:
    whatif_run_execute(run_id=run_id)


@app.task(name=SHARD_TASK, acks_late=True, ignore_result=True)
def whatif_shard(payload: dict[str, Any]) -> None:
    shard_execute(payload=payload)


@worker_ready.connect
def _reap_while_the_worker_lives(**kwargs: Any) -> None:
    # A worker that starts may be the replacement of one that died mid-run; while it lives, it keeps
    # reaping, so a run whose worker died is marked failed even if nobody looks at it.
    start_reaper()
    # Its snapshot kept current from the start: the first run or shard it gets is answered warm.
    start_warmer(every=settings.DRADASH_WHATIF_WARM_SECONDS)
