"""bspatial.modeling: the BEHAVIOR-Spatial VLA (configuration, model, processor). Filled by the model issue."""
