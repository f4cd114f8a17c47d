# The two commands of the README: `make demo` and `make test`. Each does all set-up from a fresh clone.
SHELL := /bin/bash
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# pytest-xdist workers of make test: the suite is mostly single-threaded CPU work, and CI has 2 cores
TEST_WORKERS ?= 2

.PHONY: demo test venv ffmpeg browser clean

demo: $(STAMP) ffmpeg
	$(VENV)/bin/bspatial demo

test: $(STAMP) ffmpeg browser
	$(VPY) -m pytest -q --durations=25 -n $(TEST_WORKERS) --dist loadscope

venv: $(STAMP)

# Re-install whenever the dependency declaration changes.
$(STAMP): setup.cfg setup.py pyproject.toml plugins/lerobot_env_bspatial/pyproject.toml
	@py="$$(scripts/find-python.sh)" || exit 1; \
	if [ ! -x "$(VPY)" ]; then echo "creating $(VENV) with $$py"; "$$py" -m venv $(VENV) || exit 1; fi
	@# The machine-wide pip config names local index folders that may be absent; pip then warns once
	@# per package. Those lines are noise, every other line passes through.
	set -o pipefail; $(VPY) -m pip install -q --upgrade pip 2>&1 | { grep -v 'neither a file nor a directory' || true; }
	set -o pipefail; $(VPY) -m pip install -q -e '.[dev,ray,vla-eval]' 2>&1 | { grep -v 'neither a file nor a directory' || true; }
	set -o pipefail; $(VPY) -m pip install -q -e plugins/lerobot_env_bspatial 2>&1 | { grep -v 'neither a file nor a directory' || true; }
	@# openpi-client (the openpi protocol tests' real client) pins numpy<2 but runs on lerobot's numpy 2: --no-deps; its imports come with .[dev]
	set -o pipefail; $(VPY) -m pip install -q --no-deps openpi-client==0.1.2 2>&1 | { grep -v 'neither a file nor a directory' || true; }
	@touch $(STAMP)

# torchcodec (lerobot's video decoder) needs the system FFmpeg libraries; without them lerobot
# falls back to PyAV with a long traceback. Install only when missing and permitted; never fail.
ffmpeg:
	@command -v ffmpeg >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get install -y -qq ffmpeg >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq ffmpeg >/dev/null 2>&1; }) \
	      || echo "note: could not install ffmpeg; video decoding falls back to PyAV"; \
	  else echo "note: ffmpeg missing and apt-get not permitted; video decoding falls back to PyAV"; fi; }

# The HTML leaderboard's browser test (tests/evaluation/analysis) drives Debian's chromium headless through
# chromedriver. Install when missing and permitted; the test itself says how to get them when absent.
browser:
	@{ command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; } || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get install -y -qq chromium chromium-driver >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium chromium-driver >/dev/null 2>&1; }) \
	      || echo "note: could not install chromium; the HTML report's browser test will fail"; \
	  else echo "note: chromium missing and apt-get not permitted; the HTML report's browser test will fail"; fi; }

clean:
	rm -rf $(VENV) *.egg-info
