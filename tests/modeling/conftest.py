"""Tiny Qwen3.5 policy fixtures (DESIGN §3 sizes), built offline once per session."""

import pytest
import torch

from bspatial.modeling import BSpatialVLAForActionPrediction
from bspatial.modeling.tiny_backbone import build_tiny_processor, tiny_policy_config
from bspatial.modeling.testing_utils import make_batch


@pytest.fixture(scope="session")
def processor():
    return build_tiny_processor()


@pytest.fixture(scope="session")
def tiny_config():
    return tiny_policy_config()


@pytest.fixture
def model(tiny_config):
    torch.manual_seed(0)
    return BSpatialVLAForActionPrediction(tiny_config)


@pytest.fixture
def batch(tiny_config, processor):
    return make_batch(tiny_config, processor, batch_size=2, image_size=32, seed=0)


@pytest.fixture
def fixed_noise(tiny_config):
    generator = torch.Generator().manual_seed(123)
    return torch.randn(2, tiny_config.chunk_size, tiny_config.action_dim, generator=generator)


@pytest.fixture(scope="module")
def one_torch_thread():
    """Training tests: tiny matmuls on a loaded 2-core machine run ~10x faster on one intra-op thread than on 2.
    (Not autouse: the golden and modeling tests keep the default thread count.)"""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def fresh_accelerate_state():
    """Accelerate's state is a process singleton: each train() call or CLI run in a test starts from a clean one."""
    from accelerate.state import AcceleratorState, PartialState

    AcceleratorState._reset_state(True)
    PartialState._reset_state()
    yield
    AcceleratorState._reset_state(True)
    PartialState._reset_state()
