"""Sleep without a robot command (idle, not spinning)."""
# expect: stopped | no robot command


def run(api):
    import time
    time.sleep(10 ** 6)
