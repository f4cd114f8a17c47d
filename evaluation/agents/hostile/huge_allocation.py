"""Allocate far more memory than the limit."""
# expect: raised | MemoryError


def run(api):
    import numpy as np
    blocks = [np.ones(10 ** 9) for _ in range(64)]     # 8 GB each
    api.log("allocated", n=len(blocks))
