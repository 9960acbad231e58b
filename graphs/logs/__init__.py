"""Execution logs and the run events the pages follow live.

- ``store`` — appending, closing and reading an attempt's log lines, stored in the database by a writer thread;
- ``lines`` — how a stored line reads as one summary;
- ``maintenance`` — pruning old lines;
- ``events`` — run events (node states, appends, status) and their listeners;
- ``live`` — publishing log lines and run events to the browsers over Channels.
"""
