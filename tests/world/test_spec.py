"""SceneSpec validation, BEHAVIOR categories from bddl, and import lightness."""

import subprocess
import sys

import numpy as np
import pytest

from bspatial.world.spec import (CameraSpec, Ceiling, LightSpec, ObjectSpec, Part, Pose, SceneSpec, Surface, Texture,
                               behavior_categories, box_object, check_category)

pytestmark = [pytest.mark.subprocess]


def test_categories_come_from_bddl():
    cats = behavior_categories()
    assert len(cats) > 1000
    for name in ("plate", "countertop", "breakfast_table", "chopping_board", "bookcase", "box_of_cereal",
                 "fridge", "bottom_cabinet", "sofa", "saucer", "can_of_soda"):
        assert name in cats, name


def test_unknown_category_names_field_value_and_suggestions():
    with pytest.raises(ValueError, match=r"object 'p'\.category .*'plates'.*plate"):
        ObjectSpec("p", "plates", (Part("sphere", (0.1,)),))
    assert check_category("plate") == "plate"


@pytest.mark.parametrize("kind,size,match", [
    ("box", (0.1, 0.1), r"part\.size \(box"),
    ("cone", (0.1,), r"part\.kind .*'cone'"),
    ("sphere", (-0.1,), r"part\.size must be positive"),
])
def test_bad_parts(kind, size, match):
    with pytest.raises(ValueError, match=match):
        Part(kind, size)


def test_scene_validation():
    obj = box_object("a", "apple", (0.1, 0.1, 0.1), (0, 0, 0.05))
    with pytest.raises(ValueError, match="surfaces\\[0\\].owner .*'nope'"):
        SceneSpec("s", objects=(obj,), surfaces=(Surface("top", "nope", 1.0, [[0, 0], [1, 0], [0, 1]]),))
    with pytest.raises(ValueError, match="at most one shadow"):
        SceneSpec("s", lights=(LightSpec(cast_shadow=True), LightSpec(cast_shadow=True)))
    with pytest.raises(ValueError, match="camera 'c'.target"):
        CameraSpec("c", (0, 0, 1), (0, 0, 1))
    with pytest.raises(ValueError, match="texture 't'.image"):
        Texture("t", np.zeros((4, 4), np.uint8))
    with pytest.raises(ValueError, match="object name must be one of \\['a'\\], got 'b'"):
        SceneSpec("s", objects=(obj,)).object("b")
    assert Pose((0, 0, 0), (2, 0, 0, 0)).quat == (1.0, 0.0, 0.0, 0.0)


def test_ceiling_validation_names_the_field_and_value():
    with pytest.raises(ValueError, match=r"ceiling.bounds must be \(x0, x1, y0, y1\) with x0 < x1 .*got \(4, 0, 0, 3\)"):
        Ceiling((4, 0, 0, 3), 2.4)
    with pytest.raises(ValueError, match="ceiling.height must be positive, got 0"):
        Ceiling((0, 4, 0, 3), 0)
    with pytest.raises(ValueError, match=r"ceiling.lights\[1\] must lie within bounds .*got \(2.0, 3.5\)"):
        Ceiling((0, 4, 0, 3), 2.4, lights=((1, 1), (2, 3.5)))
    with pytest.raises(ValueError, match="ceiling.light_radius must be positive and fit the ceiling, got 2.0"):
        Ceiling((0, 4, 0, 3), 2.4, light_radius=2.0)
    with pytest.raises(ValueError, match=r"ceilings\[0\] must be a Ceiling, got tuple"):
        SceneSpec("s", ceilings=((0, 4, 0, 3),))
    assert SceneSpec("s").ceilings == ()


def test_importing_bspatial_and_specs_needs_no_mujoco():
    code = ("import sys, bspatial, bspatial.sim, bspatial.world.spec, bspatial.sim.backend; "
            "assert 'mujoco' not in sys.modules, 'mujoco imported'; "
            "assert 'OpenGL' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
