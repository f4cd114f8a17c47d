"""Flood the host's episode log with megabyte entries (to exhaust the host's memory)."""
# expect: raised | the episode log is full


def run(api):
    blob = "x" * 900_000
    while True:
        api.log("flood", blob=blob)
