"""Start threads without end through _thread reached without an import."""
# expect: raised | can't start new thread|MemoryError


def run(api):
    for cls in ().__class__.__base__.__subclasses__():
        if cls.__name__ == "_wrap_close":
            thread = cls.__init__.__globals__["sys"].modules["_thread"]
            lock = thread.allocate_lock()
            lock.acquire()
            while True:
                thread.start_new_thread(lock.acquire, ())
