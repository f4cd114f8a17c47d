"""Read the package's own sources (the host's API, the task code with its targets) beside the child's script."""
# expect: raised | PermissionError


def run(api):
    for cls in ().__class__.__base__.__subclasses__():
        if cls.__name__ == "_wrap_close":
            sys = cls.__init__.__globals__["sys"]
            here = sys.modules["__main__"].__file__.rsplit("/", 1)[0]
            with open(here + "/api.py") as handle:
                handle.read()
