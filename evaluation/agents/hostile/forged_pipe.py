"""Write garbage straight onto the request pipe (a huge length header)."""
# expect: stopped | protocol violation


def run(api):
    channel = api._channel
    import struct
    for cls in ().__class__.__base__.__subclasses__():
        if cls.__name__ == "_wrap_close":
            os = cls.__init__.__globals__["sys"].modules["os"]
            os.write(channel.request_fd, struct.pack(">Q", 1 << 40) + b"garbage")
            api.get_state()
