"""Spin forever without a robot command."""
# expect: stopped | no robot command


def run(api):
    api.wait(0.1)
    while True:
        pass
