"""The procedural asset library (bspatial.world.assets): closed outward meshes, exact fits to the object's
box, determinism in the seed, modest face counts, and physics-neutral dressing at the spec level.

Expected boxes are computed here from the mesh vertices themselves (normalised vertices x part size +
part position), never through the library's own box helpers.
"""

import dataclasses
import hashlib
import pickle
import subprocess
import sys

import numpy as np
import pytest
import trimesh

from bspatial.world.assets import MODELS, dress, dressed_parts, materialised, meshed_categories
from bspatial.world.assets.registry import ACCENTED, PRINTED
from bspatial.world.relations import object_box
from bspatial.world.spec import ObjectSpec, Part, Pose
from bspatial.world.textures import label_texture

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]

LABEL = label_texture("label", "TEST", (200, 30, 30))

BOX_TOLERANCE_M = 1e-6
"""A dressed object's visual box equals its primitive box to 1 micrometre (the fit is exact up to float
rounding; 1e-6 m leaves room for it and catches any real misfit, which would be millimetres)."""
MAX_FACES = 2500
"""Faces per dressed object: the issue asks for a few hundred to ~2k so the closed loop stays fast."""
EXTENTS = [(0.12, 0.25, 0.06), (0.09, 0.09, 0.11), (0.3, 0.2, 0.02), (0.05, 0.4, 0.45)]


def _primitive(category: str, extents, yaw: float = 0.0, position=(0.4, -0.2, 0.9)) -> ObjectSpec:
    """A one-box object of ``category`` with the given extents (bottom face on the object frame)."""
    texture = LABEL if category in PRINTED else None
    return ObjectSpec(f"{category}_0", category, (Part("box", extents, Pose((0.01, -0.02, extents[2] / 2)),
                                                       rgba=(0.6, 0.3, 0.2, 1), texture=texture),),
                      pose=Pose.from_xy_yaw(*position, yaw))


def _model(category: str, seed: int, ext):
    extra = (LABEL,) if category in PRINTED else ((0.9, 0.9, 0.88),) if category in ACCENTED else ()
    return MODELS[category](np.random.default_rng(seed), np.asarray(ext, dtype=float), (0.5, 0.4, 0.3), *extra)


def _visual_vertices(obj: ObjectSpec) -> np.ndarray:
    """Object-frame vertices of every mesh part (the part poses here carry no rotation)."""
    out = []
    for part in dressed_parts(obj):
        if part.kind == "mesh":
            assert part.pose.quat == (1.0, 0.0, 0.0, 0.0)
            out.append(part.mesh.vertices * np.asarray(part.size) + np.asarray(part.pose.position))
    return np.concatenate(out)


def _digest(obj: ObjectSpec) -> str:
    h = hashlib.sha256()
    for part in dressed_parts(obj):
        if part.kind == "mesh":
            h.update(part.mesh.vertices.tobytes())
            h.update(part.mesh.faces.tobytes())
            h.update(np.asarray(part.size).tobytes())
            h.update(np.asarray(part.rgba).tobytes())
    return h.hexdigest()


def test_the_library_covers_the_common_categories():
    for category in ("teapot", "kettle", "mug", "sock", "rag", "pot_plant", "carving_knife", "banana", "bowl",
                     "plate", "wine_bottle", "frying_pan", "teddy_bear", "hammer"):
        assert category in meshed_categories(), category


@pytest.mark.parametrize("category", sorted(MODELS))
def test_every_piece_is_a_closed_outward_solid(category):
    pieces = _model(category, 3, EXTENTS[0])
    assert pieces
    for piece in pieces:
        mesh = trimesh.Trimesh(piece.mesh.vertices, piece.mesh.faces, process=False)
        if piece.uv is not None:   # texture seams duplicate vertices: close them by position first
            # Printed categories wear their builder's label; others may wear the library's own prints.
            assert (piece.texture is LABEL if category in PRINTED else piece.texture.name.startswith("asset/"))
            assert piece.uv.shape == (len(mesh.vertices), 2)
            mesh.merge_vertices(merge_tex=True, merge_norm=True)
        assert mesh.is_winding_consistent, category
        assert mesh.is_watertight, category
        assert mesh.volume > 0, f"{category}: normals point inwards"
        assert all(0.0 <= c <= 1.0 for c in piece.rgb)


@pytest.mark.parametrize("category", sorted(MODELS))
def test_dressed_box_equals_the_primitive_box(category):
    for i, extents in enumerate(EXTENTS):
        obj = _primitive(category, extents, yaw=0.3 * i)
        dressed = dress(obj)
        lo, hi = (obj.parts[0].pose.position - np.asarray(extents) / 2, obj.parts[0].pose.position + np.asarray(extents) / 2)
        v = _visual_vertices(dressed)
        np.testing.assert_allclose(v.min(0), lo, atol=BOX_TOLERANCE_M)
        np.testing.assert_allclose(v.max(0), hi, atol=BOX_TOLERANCE_M)
        np.testing.assert_allclose(object_box(dressed).extents, extents, atol=BOX_TOLERANCE_M)
        assert sum(len(p.mesh.faces) for p in dressed_parts(dressed) if p.kind == "mesh") <= MAX_FACES


@pytest.mark.parametrize("category", sorted(MODELS))
def test_dressing_keeps_every_primitive_as_an_invisible_collider(category):
    obj = _primitive(category, EXTENTS[1])
    dressed = dress(obj)
    primitives = [p for p in dressed.parts if p.kind != "mesh"]
    assert [dataclasses.replace(p, visible=True) for p in primitives] == list(obj.parts)
    assert not any(p.visible for p in primitives)
    meshes = [p for p in dressed_parts(dressed) if p.kind == "mesh"]
    assert meshes and all(p.visible and not p.collide for p in meshes)
    assert (dressed.mass, dressed.friction, dressed.pose) == (obj.mass, obj.friction, obj.pose)


def test_same_instance_same_bytes_and_other_instances_differ():
    for category in sorted(MODELS):
        a = dress(_primitive(category, EXTENTS[0]))
        b = dress(_primitive(category, EXTENTS[0]))
        assert _digest(a) == _digest(b), category
        moved = dress(_primitive(category, EXTENTS[0], position=(0.5, -0.2, 0.9)))
        assert _digest(moved) != _digest(a), f"{category}: two instances look identical"


@pytest.mark.parametrize("category", ["teapot", "banana", "sock", "pot_plant"])
def test_a_model_is_deterministic_in_its_rng(category):
    ext = np.array(EXTENTS[0])

    def digest(seed):
        pieces = _model(category, seed, ext)
        return hashlib.sha256(b"".join(p.mesh.vertices.tobytes() + np.asarray(p.rgb).tobytes() for p in pieces)).hexdigest()

    assert digest(7) == digest(7)
    assert digest(7) != digest(8)


def test_same_bytes_in_another_process():
    code = ("import sys; sys.path.insert(0, %r); from test_assets import _digest, _primitive; "
            "from bspatial.world.assets import dress; print(_digest(dress(_primitive('teapot', (0.12, 0.25, 0.06)))))")
    here = str(__import__("pathlib").Path(__file__).parent)
    out = subprocess.run([sys.executable, "-c", code % here], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == _digest(dress(_primitive("teapot", (0.12, 0.25, 0.06))))


def test_printed_categories_wear_their_own_texture():
    dressed = dress(_primitive("can_of_soda", (0.066, 0.066, 0.122)))
    printed = [p for p in dressed_parts(dressed) if p.kind == "mesh" and p.texture is not None]
    assert printed and all(p.texture is LABEL and p.mesh.texcoords is not None for p in printed)
    assert all(0.0 <= p.mesh.texcoords.min() and p.mesh.texcoords.max() <= 1.0 for p in printed)


def test_a_printed_category_without_a_texture_is_an_error():
    bare = ObjectSpec("can_0", "can_of_soda", (Part("cylinder", (0.033, 0.12), Pose((0, 0, 0.06))),))
    with pytest.raises(ValueError, match=r"object 'can_0' of printed category 'can_of_soda' must have a textured part"):
        dress(bare)


def test_objects_without_a_model_and_dressed_objects_are_left_alone():
    plain = _primitive("countertop", (0.6, 1.2, 0.9))
    assert dress(plain) is plain
    once = dress(_primitive("mug", EXTENTS[1]))
    assert dress(once) is once


def test_a_dressed_spec_carries_a_reference_not_meshes_and_pickles_the_same_bytes_in_another_process():
    code = ("import sys, pickle, hashlib; sys.path.insert(0, %r); from test_assets import _primitive; "
            "from bspatial.world.assets import dress; "
            "print(hashlib.sha256(pickle.dumps(dress(_primitive('teapot', (0.12, 0.25, 0.06))), protocol=4)).hexdigest())")
    here = str(__import__("pathlib").Path(__file__).parent)
    dressed = dress(_primitive("teapot", (0.12, 0.25, 0.06)))
    assert dressed.look is not None and not any(p.kind == "mesh" for p in dressed.parts)
    mine = hashlib.sha256(pickle.dumps(dressed, protocol=4)).hexdigest()
    dressed_parts(dressed)   # resolving the look must not change what the spec pickles to
    assert hashlib.sha256(pickle.dumps(dressed, protocol=4)).hexdigest() == mine
    out = subprocess.run([sys.executable, "-c", code % here], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == mine


def test_materialised_spells_the_meshes_out_and_a_transformed_look_is_an_error():
    dressed = dress(_primitive("mug", EXTENTS[1]))
    spelled = materialised(dressed)
    assert spelled.look is None and spelled.parts == dressed_parts(dressed)
    assert [p.kind for p in spelled.parts].count("mesh") >= 1
    # Rescaling the primitives alone would leave the look's meshes at the old size: refused, naming the object.
    grown = tuple(dataclasses.replace(p, size=tuple(2 * v for v in p.size)) for p in dressed.parts)
    with pytest.raises(ValueError, match=r"object 'mug_0'.parts must start with the parts its look was dressed over"):
        dataclasses.replace(dressed, parts=grown)
    # Moving the object keeps its parts, so its look stays valid.
    moved = dataclasses.replace(dressed, pose=Pose((1.0, 2.0, 0.5)))
    assert dressed_parts(moved) == dressed_parts(dressed)
