"""Send a request nested 100,000 lists deep straight onto the pipe (to overflow the host's JSON parser)."""
# expect: stopped | protocol violation: a request that is not readable JSON \(RecursionError


def run(api):
    import struct
    for cls in ().__class__.__base__.__subclasses__():
        if cls.__name__ == "_wrap_close":
            os = cls.__init__.__globals__["sys"].modules["os"]
            body = b'{"type": "call", "method": "log", "args": ["x"], "kwargs": {"d": ' + b"[" * 100_000 \
                + b"]" * 100_000 + b"}}"
            os.write(api._channel.request_fd, struct.pack(">Q", len(body)) + body)
            api.get_state()
