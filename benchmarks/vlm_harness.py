"""VLM harness speed, measured side by side in one run.

1. Harness overhead per question with the chance backend: read the row, decode its images, build
   the prompt, parse and score (the runner's own loop, logs included). Target: under 2 ms.
2. The tiny random Qwen3.5 through the transformers backend: batch 8 vs batch 1 throughput on the
   same items (greedy; the outputs are checked equal). Target: at least 3x.
3. The OpenAI backend against the local server (same tiny model, server batches up to 16):
   16 concurrent requests vs 1 (outputs checked equal to the direct backend).

Everything is built on this machine (fixture dataset, tiny checkpoint); nothing is downloaded.
The fixture is small, so item lists are repeated (``--repeat``) to get stable timings.

Run: ``.venv/bin/python benchmarks/vlm_harness.py``
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

from bspatial.evaluation.vlm import runner
from bspatial.evaluation.vlm.backend_api import Request
from bspatial.evaluation.vlm.backend_chance import ChanceBackend
from bspatial.evaluation.vlm.backends import load_backend
from bspatial.evaluation.vlm.fixtures import write_fixture_repos
from bspatial.evaluation.vlm.records import vqa_item
from bspatial.evaluation.vlm.serve import ChatCompletionServer
from bspatial.evaluation.vlm.tiny_checkpoint import write_tiny_checkpoint

logger = logging.getLogger("benchmarks.vlm_harness")


def harness_overhead(repos: dict[str, Path], work: Path, rounds: int) -> float:
    """Seconds per question of a whole chance run (minus dataset load + hashing), median of rounds."""
    from datasets import disable_progress_bars

    disable_progress_bars()
    per_item = []
    for k in range(rounds):
        for config in ("general", "task_manipulation", "task_navigation"):
            dataset = runner._load(str(repos["vqa"]), "vqa", config, "test")
            _, keys = runner._scan(dataset, None)
            folder = work / f"overhead-{k}-{config}"
            folder.mkdir(parents=True)
            start = time.perf_counter()
            runner._run_pending(dataset, keys, list(range(len(keys))), "vqa", ChanceBackend(seed=0), folder, "0" * 64, 8, False)
            per_item.append((time.perf_counter() - start) / len(keys))
    per_item.sort()
    return per_item[len(per_item) // 2]


def fixture_requests(repos: dict[str, Path], repeat: int) -> list[Request]:
    dataset = runner._load(str(repos["vqa"]), "vqa", "general", "test")
    items = [vqa_item(row) for _, row in runner._arrow_rows(dataset)]
    requests = [runner._request(item) for item in items]
    return [Request(f"{r.id}#{k}", r.prompt, r.images, r.kind, r.options) for k in range(repeat) for r in requests]


def timed(generate, requests: list[Request], batch: int) -> tuple[float, list[str]]:
    start = time.perf_counter()
    texts = [resp.text for k in range(0, len(requests), batch) for resp in generate(requests[k : k + batch])]
    return time.perf_counter() - start, texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--items", type=int, default=48, help="generation items per measurement")
    parser.add_argument("--overhead-rounds", type=int, default=5)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    work = Path(tempfile.mkdtemp(prefix="bspatial-bench-"))
    repos = write_fixture_repos(work / "fixture")

    overhead = harness_overhead(repos, work, args.overhead_rounds)

    checkpoint = write_tiny_checkpoint(work / "tiny", seed=0)
    tiny = load_backend(str(checkpoint), max_new_tokens=args.max_new_tokens)
    requests = fixture_requests(repos, repeat=-(-args.items // 33))[: args.items]
    tiny.generate(requests[:8])  # warm-up: kernels, allocator
    t_single, single = timed(tiny.generate, requests, 1)
    t_batch, batched = timed(tiny.generate, requests, 8)

    with ChatCompletionServer(tiny, "tiny", max_batch=16) as server:
        options = dict(max_tokens=args.max_new_tokens)
        one = load_backend(f"openai:{server.base_url}#tiny", concurrency=1, **options)
        many = load_backend(f"openai:{server.base_url}#tiny", concurrency=16, **options)
        many.generate(requests[:16])  # warm-up
        t_http1, http1 = timed(one.generate, requests, 16)
        t_http16, http16 = timed(many.generate, requests, 16)

    n = len(requests)
    print(f"\nVLM harness benchmark ({n} generation items, max_new_tokens {args.max_new_tokens}, tiny Qwen3.5 on CPU)\n")
    print(f"{'measurement':58s} {'value':>12s}  target")
    print(f"{'harness overhead per question, chance backend':58s} {overhead * 1e3:9.3f} ms  < 2 ms")
    print(f"{'transformers batch 1 (items/s)':58s} {n / t_single:12.2f}")
    print(f"{'transformers batch 8 (items/s)':58s} {n / t_batch:12.2f}")
    print(f"{'  batch 8 / batch 1 throughput':58s} {t_single / t_batch:11.2f}x  >= 3x")
    print(f"{'  batch 8 outputs == batch 1 outputs':58s} {str(batched == single):>12s}")
    print(f"{'openai -> local server, 1 in flight (items/s)':58s} {n / t_http1:12.2f}")
    print(f"{'openai -> local server, 16 in flight (items/s)':58s} {n / t_http16:12.2f}")
    print(f"{'  16 concurrent / 1 throughput':58s} {t_http1 / t_http16:11.2f}x")
    print(f"{'  openai outputs == direct outputs (both concurrencies)':58s} {str(http1 == single == http16):>12s}")


if __name__ == "__main__":
    main()
