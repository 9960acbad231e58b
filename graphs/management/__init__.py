"""The ``manage.py`` commands of the console.

- ``commands`` — one module per command, each saying what it does in its ``help``;
- ``args`` — argument parsing the commands share.
"""
