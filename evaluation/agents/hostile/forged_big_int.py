"""Send a request holding a 100,000-digit integer straight onto the pipe (past Python's int-parsing limit)."""
# expect: stopped | protocol violation: a request that is not readable JSON \(ValueError


def run(api):
    import struct
    for cls in ().__class__.__base__.__subclasses__():
        if cls.__name__ == "_wrap_close":
            os = cls.__init__.__globals__["sys"].modules["os"]
            body = b'{"type": "call", "method": "wait", "args": [' + b"9" * 100_000 + b"]}"
            os.write(api._channel.request_fd, struct.pack(">Q", len(body)) + body)
            api.get_state()
