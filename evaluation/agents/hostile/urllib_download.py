"""Download a page with urllib (standard library networking)."""
# expect: raised | import of 'urllib.request' is not allowed


def run(api):
    import urllib.request
    urllib.request.urlopen("http://example.com", timeout=2).read()
