"""Execution logs and the run events the pages follow live.

- ``store`` — opening, appending, closing and reading an attempt's log, and registering who hears of its lines;
- ``numbering`` — numbering, cutting and capping the lines this process writes, held until stored;
- ``writer`` — the thread that stores them in batched INSERTs, renumbers on a clash and tells the listeners;
- ``lines`` — how a stored line reads as one summary;
- ``maintenance`` — pruning old lines;
- ``events`` — run events (node states, appends, status) and their listeners;
- ``live`` — publishing log lines and run events to the browsers over Channels.
"""
