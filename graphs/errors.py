"""Domain errors shared by planning, execution and the web layer."""


class WorkGraphError(Exception):
    """Base class for errors the console reports to a person as they are."""


class InvalidTransitionError(WorkGraphError):
    """A status change that the current status does not allow."""

    def __init__(self, *, entity: str, current: str, requested: str) -> None:
        # str() first: a TextChoices member's repr names its enum, not the word a person reads.
        self.entity = entity
        self.current = str(current)
        self.requested = str(requested)
        super().__init__(f"{entity} cannot go from {self.current!r} to {self.requested!r}")
