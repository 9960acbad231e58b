"""Datasets: a project's real cases, kept so that experiments can run each again and measure a skill's or
an agent profile's revision against them.

- ``edits`` — a dataset created or renamed, every field checked, the change recorded in the audit log;
- ``cases`` — a case added, given whole or taken from a task or a run, its commit resolved in the project's
  repository and its checks checked, every problem named at once;
- ``sources`` — what a task or a run gives a case, and which runs a page offers to add;
- ``reads`` — a project's datasets and a dataset's cases, as the API and the pages read them.
"""
