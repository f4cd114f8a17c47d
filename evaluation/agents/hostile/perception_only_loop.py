"""Call perception forever and never move (perception calls do not count as robot commands)."""
# expect: stopped | no robot command


def run(api):
    while True:
        api.get_state()
