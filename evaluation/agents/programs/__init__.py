"""The scripted reference writer's programs: one agent program per task family, written against the agent API only.

Each module here is an agent program's text (it defines ``run(api)`` and imports only what the sandbox
allows); :func:`bspatial.evaluation.agents.writers.reference_program` reads it as text, it is never imported
into the host. ``reach`` serves the reach families (contact reach and the soda cans' base-proximity reach),
``placement`` the directional and container placements.
"""
