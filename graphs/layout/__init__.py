"""The run graph's layout computed on the server, so a first visit paints it at once.

- ``compute`` — the drawing's input and digest, and ELK run by Node.js (``dag_layout.mjs``);
- ``run_layouts`` — the background job that lays a run out when its drawing changes, and what a page is served;
- ``apps`` — registers the job and its run-event listener with the engine at start-up.
"""
