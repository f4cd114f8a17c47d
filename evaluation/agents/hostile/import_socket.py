"""Import socket and connect to the outside."""
# expect: raised | import of 'socket' is not allowed


def run(api):
    import socket
    socket.create_connection(("example.com", 80), timeout=2)
