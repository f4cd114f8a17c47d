"""Docstring examples of bspatial.modeling and bspatial.evaluation, imported under their real names.

pytest's --doctest-modules would import modeling/ and evaluation/ as top-level packages (`modeling`,
`evaluation`): a second copy of every class, which breaks registries such as transformers' AutoModel.
So those two folders are left out of testpaths and their doctests run here, through the installed
`bspatial.*` modules. (bspatial/ itself is collected directly: its folder name is its import name.)
"""

import doctest
import importlib
import pkgutil

import pytest

import bspatial.evaluation
import bspatial.modeling

pytestmark = [pytest.mark.slow]


def _modules() -> list[str]:
    names = []
    for package in (bspatial.modeling, bspatial.evaluation):
        names.append(package.__name__)
        names += [m.name for m in pkgutil.walk_packages(package.__path__, prefix=package.__name__ + ".")]
    return sorted(names)


@pytest.mark.parametrize("module_name", _modules())
def test_docstring_examples(module_name):
    module = importlib.import_module(module_name)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    for test in finder.find(module, module_name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples failed in {module_name}"
