"""The "mesh" part kind of the scene spec: normalised meshes, visual-only rules, clear errors."""

import dataclasses

import numpy as np
import pytest
import trimesh

from bspatial.world.relations import object_box
from bspatial.world.spec import Mesh, ObjectSpec, Part, Pose


def _unit_mesh(subdivisions: int = 1) -> Mesh:
    m = trimesh.creation.icosphere(subdivisions)
    v = (m.vertices - m.vertices.min(0)) / np.ptp(m.vertices, axis=0) - 0.5
    return Mesh(v, m.faces)


def test_mesh_must_span_the_unit_cube():
    m = trimesh.creation.icosphere(1)
    with pytest.raises(ValueError, match=r"mesh.vertices must span the unit cube"):
        Mesh(m.vertices, m.faces)


def test_mesh_faces_must_index_its_vertices():
    mesh = _unit_mesh()
    with pytest.raises(ValueError, match=r"mesh.faces must be \(F>=4, 3\) indices into 42 vertices"):
        Mesh(mesh.vertices, mesh.faces + 100)


def test_mesh_key_is_a_digest_of_its_bytes():
    a, b = _unit_mesh(), _unit_mesh()
    assert a.key == b.key and a is not b and a == b
    assert _unit_mesh(2).key != a.key


def test_mesh_parts_are_visual_only():
    mesh = _unit_mesh()
    with pytest.raises(ValueError, match=r"part.collide must be False for a 'mesh' part"):
        Part("mesh", (0.1, 0.1, 0.1), mesh=mesh)
    with pytest.raises(ValueError, match=r"part.mesh must be given exactly when part.kind is 'mesh'"):
        Part("mesh", (0.1, 0.1, 0.1), collide=False)
    with pytest.raises(ValueError, match=r"part.mesh must be given exactly when part.kind is 'mesh'"):
        Part("box", (0.1, 0.1, 0.1), mesh=mesh)
    with pytest.raises(ValueError, match=r"part.size \(mesh: \(x, y, z\) full extents"):
        Part("mesh", (0.1, 0.1), collide=False, mesh=mesh)


def test_a_textured_mesh_needs_texcoords():
    from bspatial.world.textures import label_texture

    with pytest.raises(ValueError, match=r"part.mesh must carry texcoords to show texture 'label'"):
        Part("mesh", (0.1, 0.1, 0.1), collide=False, mesh=_unit_mesh(), texture=label_texture("label", "X", (9, 9, 9)))


def test_an_object_needs_a_primitive():
    part = Part("mesh", (0.1, 0.1, 0.1), collide=False, mesh=_unit_mesh())
    with pytest.raises(ValueError, match=r"object 'ball_0'.parts must include a primitive"):
        ObjectSpec("ball_0", "softball", (part,))


def test_a_mesh_part_boxes_like_its_size_and_rescales_with_it():
    part = Part("mesh", (0.1, 0.2, 0.3), Pose((0.0, 0.0, 0.15)), collide=False, mesh=_unit_mesh())
    obj = ObjectSpec("ball_0", "softball", (Part("box", (0.01, 0.01, 0.01), Pose((0.0, 0.0, 0.15)), visible=False), part))
    np.testing.assert_allclose(object_box(obj).extents, (0.1, 0.2, 0.3))
    bigger = dataclasses.replace(part, size=(0.2, 0.4, 0.6))
    np.testing.assert_allclose(bigger.local_half_extents(), (0.1, 0.2, 0.3))
