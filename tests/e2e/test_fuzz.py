"""schemathesis against ``conveyor local``, driven by the service's own OpenAPI document, with a bootstrap key.

``make test`` runs a bounded run with a fixed seed (CONVEYOR_FUZZ_EXAMPLES cases per operation, 10 by default);
``make fuzz`` a longer one with a new seed each time. The target is no 5xx and no response that differs from the
document. A failure it finds becomes a test in tests/functional/test_fuzz_regressions.py before it is fixed.
The run's requests are kept in tests/artifacts/fuzz/ (a HAR file), with their count by status code.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from tests.e2e.test_local_stack import KNOWN_KEY, LocalStack

SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "fuzz"
CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"


def statuses(har: Path) -> Counter[int]:
    """How many of the run's requests got each status code."""
    return Counter(entry["response"]["status"] for entry in json.loads(har.read_text())["log"]["entries"])


def test_fuzzing_every_operation_finds_no_server_error_and_no_response_the_document_does_not_describe(
    stack: LocalStack,
) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    har = ARTIFACTS / "requests.har"
    examples = os.environ.get("CONVEYOR_FUZZ_EXAMPLES", "10")
    seed = os.environ.get("CONVEYOR_FUZZ_SEED", "20261123")
    command = [
        str(SCHEMATHESIS), "run", f"{stack.base_url}/api/openapi.json",
        "--url", f"{stack.base_url}/api",
        "--checks", CHECKS,
        "--max-examples", examples,
        "--header", f"Authorization: Bearer {KNOWN_KEY}",
        "--workers", "1",  # with more threads, hypothesis can crash inside CPython's ast module
        "--report", "har", "--report-har-path", str(har),
        "--no-color",
    ]  # fmt: skip
    if seed:
        command += ["--seed", seed]

    run = subprocess.run(  # in ARTIFACTS, where it keeps its own cache too
        command, capture_output=True, text=True, timeout=1800, stdin=subprocess.DEVNULL, cwd=ARTIFACTS
    )

    counts = statuses(har)
    used_seed = re.search(r"Seed: (\d+)", run.stdout)
    summary = {
        "requests": sum(counts.values()),
        "byStatus": dict(sorted(counts.items())),
        "seed": used_seed.group(1) if used_seed else seed,  # replay a run with CONVEYOR_FUZZ_SEED
    }
    (ARTIFACTS / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"fuzzed: {summary}")
    assert run.returncode == 0, f"{run.stdout[-20000:]}\n{run.stderr[-5000:]}"
    assert summary["requests"] >= 55 * int(examples) // 2, summary  # every operation was exercised, not just a few
    assert not any(status >= 500 for status in counts), summary
