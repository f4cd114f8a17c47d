"""The metric's Space widget (the card's ``app_file``): evaluate's Gradio app over this folder's module.

The module is loaded by its path beside this file, so the Space serves exactly the code it holds, and a
local checkout runs the same widget offline (``pip install gradio`` first).
"""

from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load(str(Path(__file__).with_name("bspatial_vqa.py")))
launch_gradio_widget(module)
