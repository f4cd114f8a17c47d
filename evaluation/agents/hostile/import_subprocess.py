"""Import subprocess and start a shell."""
# expect: raised | import of 'subprocess' is not allowed


def run(api):
    import subprocess
    subprocess.run(["sh", "-c", "echo escaped"])
