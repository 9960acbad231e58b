"""The 40-node chain in the Celery mode against bare Celery, three sittings (``tests.bench.scale_chain``).

Run on demand::

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench REDIS_URL=redis://127.0.0.1:6379/0 \\
        .venv/bin/python -m pytest tests/bench/bench_chain_floor.py -o python_files='bench_*.py' -s
"""

from __future__ import annotations

import os

import pytest

from tests.bench import scale_chain
from tests.bench.report import load_average, tables


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_the_chain_on_its_floor_in_three_sittings(task, tmp_path):
    before = load_average()
    rows = scale_chain.rows(task=task, log_dir=tmp_path)
    print(f"\n\nThe 40-node chain against bare Celery ({os.cpu_count()} cores; load {before} before,"
          f" {load_average()} after)\n"
          + tables(["metric", "measured", "target", "met"],
                   [[metric, measured, target, "yes" if met else "no"] for metric, measured, target, met in rows]))
