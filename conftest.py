"""Test-session isolation: no network, and every Hugging Face cache under a throwaway folder.

This must run before anything imports evaluate / datasets / huggingface_hub, which read these
variables at import time, so it lives in the root conftest (loaded first by pytest).
"""

import os
import tempfile

_HF_HOME = tempfile.mkdtemp(prefix="bspatial-test-hf-")
os.environ["HF_HOME"] = _HF_HOME
os.environ.pop("HF_MODULES_CACHE", None)
os.environ.pop("HF_DATASETS_CACHE", None)
for _flag in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ[_flag] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
