"""Work people and other systems do beside the engine: reports for external nodes, the relay that attaches
them, and reviews of an attempt's change.

- ``reports`` — the report rules and recording a reported result;
- ``relay`` — attaching an external node under a running node, and its result;
- ``change_reviews`` — a reviewer's review of an attempt's change, checked whole, then carried out.
"""
