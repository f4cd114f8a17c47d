"""Print without end, to fill the disk."""
# expect: raised | File too large


def run(api):
    line = "x" * 10000
    while True:
        print(line)
