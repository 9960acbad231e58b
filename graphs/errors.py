"""Domain errors shared by planning, execution and the web layer."""


class WorkGraphError(Exception):
    """Base class for errors the console reports to a person as they are."""


class InvalidTransitionError(WorkGraphError):
    """A status change that the current status does not allow."""

    def __init__(self, *, entity: str, current: str, requested: str) -> None:
        self.entity = entity
        self.current = current
        self.requested = requested
        super().__init__(f"{entity} cannot go from {current!r} to {requested!r}")
