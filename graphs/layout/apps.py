from django.apps import AppConfig


class LayoutConfig(AppConfig):
    """The server layout registers its job and its run-event listener itself: the engine knows nothing of it."""

    name = "graphs.layout"
    label = "graphs_layout"
    verbose_name = "Run graph layouts"

    def ready(self) -> None:
        from graphs.executors import job_handlers_install
        from graphs.layout.run_layouts import RUN_LAYOUT_JOB, run_layout_job, run_layout_on_event
        from graphs.logs.events import run_event_listener_register

        # Not guarded as the engine's run jobs are: a layout that fails is recorded on its row, and never
        # fails the run it draws.
        job_handlers_install({RUN_LAYOUT_JOB: run_layout_job})
        # A run whose drawing changed is laid out again on the server, for the next page to paint at once.
        run_event_listener_register(run_layout_on_event)
