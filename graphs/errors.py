"""Domain errors shared by planning, execution and the web layer."""


class WorkGraphError(Exception):
    """Base class for errors the console reports to a person as they are."""


class TaskBusyError(WorkGraphError):
    """A task already has a run under way: it gets one plan, pipeline or fork at a time."""

    def __init__(self, *, task_id: object, run_id: object, status: str) -> None:
        self.run_id = run_id
        super().__init__(f"task {task_id} already has run {run_id} under way ({status}); cancel it or wait for it")


class InvalidTransitionError(WorkGraphError):
    """A status change that the current status does not allow."""

    def __init__(self, *, entity: str, current: str, requested: str) -> None:
        # str() first: a TextChoices member's repr names its enum, not the word a person reads.
        self.entity = entity
        self.current = str(current)
        self.requested = str(requested)
        super().__init__(f"{entity} cannot go from {self.current!r} to {self.requested!r}")
