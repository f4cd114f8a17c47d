"""Pure scoring rules of BEHAVIOR-Spatial (paper Appendix 14, Table S4): one implementation each.

The `evaluate` modules in metrics/ and the evaluation harness both call these functions.
"""
