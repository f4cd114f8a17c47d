"""Kill the host process with a signal (os reached without an import)."""
# expect: raised | PermissionError


def run(api):
    for cls in ().__class__.__base__.__subclasses__():
        if cls.__name__ == "_wrap_close":
            os = cls.__init__.__globals__["sys"].modules["os"]
            os.kill(os.getppid(), 9)
