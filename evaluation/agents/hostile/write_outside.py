"""Write a file inside the temp folder (allowed), then one beside it in its parent folder."""
# expect: raised | PermissionError


def run(api):
    with open("scratch.txt", "w") as handle:
        handle.write("ok")
    with open("../bspatial-hostile-escaped", "w") as handle:
        handle.write("escaped")
