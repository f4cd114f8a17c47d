"""Pass an object's name where the API wants a base-frame point (programs never get identities)."""
# expect: raised | p must be 3 numbers


def run(api):
    api.approach("plate_0")
