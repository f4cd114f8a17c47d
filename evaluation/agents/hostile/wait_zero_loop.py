"""Keep the watchdog quiet with robot commands that move nothing (wait(0) forever)."""
# expect: stopped | no robot command


def run(api):
    while True:
        api.wait(0)
