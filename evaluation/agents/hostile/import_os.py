"""Import os and run a shell command."""
# expect: raised | import of 'os' is not allowed


def run(api):
    import os
    os.system("touch /tmp/bspatial-hostile-escaped")
