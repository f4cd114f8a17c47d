"""The scripted reference writer's programs: one agent program per task family, written against the agent API only.

Each module here is an agent program's text (it defines ``run(api)`` and imports only what the sandbox
allows); :func:`bspatial.evaluation.agents.writers.reference_program` reads it as text and the host never
runs it (its pure geometry helpers are unit-tested by importing the module). ``reach`` serves the reach
families (contact reach and the soda cans' base-proximity reach), ``placement`` directional placement and
``container`` container placement (shelf layers found from depth, counted from the bottom).
"""
