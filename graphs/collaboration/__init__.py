"""Work done outside the engine: reports for external nodes, and the relay that attaches them.

- ``reports`` — the report rules and recording a reported result;
- ``relay`` — attaching an external node under a running node, and its result.
"""
