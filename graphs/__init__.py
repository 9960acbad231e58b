"""The work-graph domain: models, manifests, planning, execution, logs."""
