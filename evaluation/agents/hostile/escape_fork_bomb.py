"""Fork bomb through os reached without an import (a class's __subclasses__ leads to os._wrap_close)."""
# expect: raised | PermissionError


def run(api):
    for cls in ().__class__.__base__.__subclasses__():
        if cls.__name__ == "_wrap_close":
            os = cls.__init__.__globals__["sys"].modules["os"]
            while True:
                os.fork()
