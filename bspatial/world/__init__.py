"""Scene content shared by the simulator and the tasks: what a household world is made of.

* :mod:`bspatial.world.spec`: backend-neutral scene description (``SceneSpec``, ``ObjectSpec``, ``Part``,
  ``Pose``, ``CameraSpec``, ...), objects named by BEHAVIOR categories from ``bddl``;
* :mod:`bspatial.world.textures`: procedural textures (wood, fabric, tiles, labels, book covers);
* :mod:`bspatial.world.objects`: the small-object library (food, plates, toys, books, containers);
* :mod:`bspatial.world.furniture`: room shells and furniture (countertop, shelving, fridge, bed, sofa);
* :mod:`bspatial.world.floorplans`: multi-room floor plans and their occupancy grids.

This layer imports only :mod:`bspatial.catalog` and :mod:`bspatial.scoring` below it, never a
simulator backend: an OmniGibson backend reads the same values.
"""
