"""Execution logs and the run events the pages follow live.

- ``store`` — opening, appending, closing and reading an attempt's log, and registering who hears of its lines;
- ``numbering`` — numbering, cutting and capping the lines this process writes, held until stored;
- ``writer`` — the thread that stores them a batch at a time, renumbers on a clash and tells the listeners;
- ``transacted`` — lines written in a caller's transaction, told on its commit, written again on its rollback;
- ``rows`` — how a batch reaches the table: COPY on PostgreSQL, one INSERT that skips a clash else;
- ``lines`` — how a stored line reads as one summary;
- ``maintenance`` — pruning old lines;
- ``events`` — run events (node states, appends, status) and their listeners;
- ``live`` — publishing log lines and run events to the browsers over Channels.
"""
