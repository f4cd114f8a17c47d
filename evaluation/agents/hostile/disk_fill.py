"""Fill the disk with files inside the temp folder (each under the file-size limit)."""
# expect: stopped | the temp folder holds


def run(api):
    block = b"x" * (1 << 20)
    n = 0
    while True:
        with open(f"fill-{n}.bin", "wb") as handle:
            handle.write(block)
        n += 1
