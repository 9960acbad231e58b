"""Experiments: a dataset's cases run again as ordinary runs, with a variant's skill and agent profile
revisions pinned, each run scored, and the gate a revision clears before it is labelled production.

- ``variants`` — an experiment asked for, checked whole (every problem named at once), its variant's
  revisions resolved to numbers;
- ``launch`` — an experiment made and its items' runs started, as many at once as its concurrency, each
  in its own worktree at its case's commit; cancelled, or stopped by its budget like a run;
- ``scoring`` — an ended run scored: its checks run on its final tree, its cost, tokens, time, loop-backs
  and retries; the job and the listener that hear a run end (``experiments_install``);
- ``aggregates`` — an experiment's pass rate with its Wilson interval, its cost and time, each case's
  outcome, and two experiments compared;
- ``reads`` — an experiment's page and two experiments' comparison as the pages show them, every figure in
  words; each dataset's experiments;
- ``gate`` — a label moved only when the experiment that measured the revision clears the project's gate.
"""
