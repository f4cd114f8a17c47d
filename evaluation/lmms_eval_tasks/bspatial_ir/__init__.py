"""The ``bspatial_ir_*`` lmms-eval tasks: YAML task files, ``_default_template_yaml`` and their hooks (``utils``).

A package only so that the hooks are importable (and tested) under their real name as well; lmms-eval itself
loads ``utils.py`` by path, next to the YAML files (``!function utils.<name>``).
"""
