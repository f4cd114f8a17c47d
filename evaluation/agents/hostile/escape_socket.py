"""Open a TCP socket to the host machine with the original __import__ taken from the import guard's closure."""
# expect: raised | PermissionError


def run(api):
    guard = __builtins__["__import__"] if isinstance(__builtins__, dict) else __builtins__.__import__
    cells = guard.__closure__
    original = next(c.cell_contents for c in cells if getattr(c.cell_contents, "__name__", "") == "__import__")
    socket = original("socket")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.connect(("127.0.0.1", 22))
