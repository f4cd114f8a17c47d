"""Run a shell through os reached without an import (os.execv replaces the interpreter)."""
# expect: raised | PermissionError


def run(api):
    for cls in ().__class__.__base__.__subclasses__():
        if cls.__name__ == "_wrap_close":
            os = cls.__init__.__globals__["sys"].modules["os"]
            os.execv("/bin/sh", ["sh", "-c", "touch /tmp/bspatial-hostile-escaped"])
