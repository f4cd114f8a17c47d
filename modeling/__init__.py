"""bspatial.modeling: BEHAVIOR-Spatial-VLA (configuration, model, flow matching, IR rendering).

Importing this package makes ``AutoConfig`` / ``AutoModel`` know ``model_type="bspatial_vla"``,
the way transformers' own models are known, so ``AutoModel.from_pretrained(ckpt)`` works without
``trust_remote_code``. This is the package's one import-time registration: two in-memory mapping
entries, no I/O, idempotent (``register_auto_classes`` may be called again). Checkpoints also carry
the model code (``auto_map``), so ``trust_remote_code=True`` loads them where bspatial is absent.
"""

from .configuration_bspatial_vla import BSpatialVLAConfig
from .modeling_bspatial_vla import (
    BSpatialVLAForActionPrediction,
    BSpatialVLAOutput,
    BSpatialVLAPrefix,
    BSpatialVLAPreTrainedModel,
)
from .processing_bspatial_vla import BSpatialVLAProcessor


def register_auto_classes() -> None:
    """Register the config, model and processor with ``AutoConfig`` / ``AutoModel`` / ``AutoProcessor`` (idempotent)."""
    from importlib import import_module

    from transformers import AutoConfig, AutoModel, AutoProcessor

    # Always the canonical `bspatial.modeling` classes: pytest's --doctest-modules also imports this
    # folder as a top-level package `modeling`, whose class copies must not replace them.
    config_class = import_module("bspatial.modeling.configuration_bspatial_vla").BSpatialVLAConfig
    model_class = import_module("bspatial.modeling.modeling_bspatial_vla").BSpatialVLAForActionPrediction
    AutoConfig.register(config_class.model_type, config_class, exist_ok=True)
    AutoModel.register(config_class, model_class, exist_ok=True)
    processor_class = import_module("bspatial.modeling.processing_bspatial_vla").BSpatialVLAProcessor
    AutoProcessor.register(config_class, processor_class, exist_ok=True)


register_auto_classes()

__all__ = [
    "BSpatialVLAConfig",
    "BSpatialVLAForActionPrediction",
    "BSpatialVLAOutput",
    "BSpatialVLAPrefix",
    "BSpatialVLAPreTrainedModel",
    "BSpatialVLAProcessor",
    "register_auto_classes",
]
