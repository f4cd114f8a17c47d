"""Read files outside the temp folder: the system's password file, the host's shell profile."""
# expect: raised | PermissionError


def run(api):
    for path in ("/etc/passwd", "/root/.bashrc"):
        with open(path) as handle:
            handle.read()
