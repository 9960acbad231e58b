"""Planning: turning a task into a work graph, and growing it.

- ``planner`` — one planning call: its prompt, the agent's answer, repair, and storing or appending the manifest;
- ``planning_node`` — the planning node a call is recorded as, and how the call ended;
- ``plan_store`` — storing a fresh manifest, or merging an append, under the run's lock;
- ``template_planning`` — planning guided by a skill's team template;
- ``gaps`` — gap-driven planning's answers;
- ``append_review`` — an append that waits for a reviewer in a project that requires approval;
- ``dag_specs`` — importing a loop-agent DAG spec as a task with a planned run;
- ``dag_spec_check`` — checking a spec, naming every problem at once;
- ``dag_spec_plan`` — translating a checked spec into a graph_manifest;
- ``dag_spec_bounds`` — the bounds an import's prompts and files are held to;
- ``intake`` — creating a task.
"""
