#!/usr/bin/env bash
# The Data APIs consortium's conformance suite (data-apis/array-api-tests) against tenferro:
# every test file collected, the pass rate printed, every failure listed by test id.
#
#   benchmarks/array_api_conformance.sh [CHECKOUT] [-- extra pytest arguments]
#
# CHECKOUT: an existing clone of array-api-tests with its array-api submodule (default:
# $ARRAY_API_TESTS_DIR, else a clone made in ${TMPDIR:-/tmp}/array-api-tests at the pinned
# commit below; this needs the network, so CI does not run it: tests/array_api guards the same
# ground offline). Needs pytest, hypothesis, ndindex and pytest-json-report in the environment.
# MODULE=array_api_strict (or numpy) runs the suite against another library for comparison;
# JOBS=2 runs it with pytest-xdist. Results: design/array-api.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TESTS_COMMIT=55fcc60179efa2680ddd6cd926ddf17b83530e2b  # array-api-tests
SPEC_COMMIT=5f847a3858875c682ae901aa22b0413bf24be9da   # its array-api submodule (the spec)
DIR=${ARRAY_API_TESTS_DIR:-${TMPDIR:-/tmp}/array-api-tests}
if [[ $# -gt 0 && $1 != "--" ]]; then DIR=$1; shift; fi
[[ ${1:-} == "--" ]] && shift

if [[ ! -d $DIR/array_api_tests ]]; then
    git clone --quiet https://github.com/data-apis/array-api-tests "$DIR"
    git -C "$DIR" checkout --quiet "$TESTS_COMMIT"
    git -C "$DIR" submodule update --init --quiet
    git -C "$DIR/array-api" checkout --quiet "$SPEC_COMMIT"
fi

MODULE=${MODULE:-tenferro}
REPORT=$(mktemp --suffix=.json)
cd "$DIR"
# PYTHONPATH: this checkout's tenferro; the warnings filter: tenferro.trace(f, ...) in old code
PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" ARRAY_API_TESTS_MODULE=$MODULE \
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
python -m pytest array_api_tests -p no:cacheprovider -q --max-examples 20 --disable-deadline \
    -W ignore::RuntimeWarning ${JOBS:+-n $JOBS} --json-report --json-report-file="$REPORT" \
    --json-report-omit log streams "$@" >/dev/null || true

python - "$REPORT" "$MODULE" <<'EOF'
import json
import sys

report = json.load(open(sys.argv[1]))
tests = report["tests"]
errors = [c for c in report.get("collectors", []) if c.get("outcome") == "failed"]
count = {}
for t in tests:
    count[t["outcome"]] = count.get(t["outcome"], 0) + 1
passed, failed = count.get("passed", 0), count.get("failed", 0) + count.get("error", 0)
print(f"array-api-tests against {sys.argv[2]}: {passed} passed, {failed} failed, "
      f"{count.get('skipped', 0)} skipped, {len(errors)} collection errors")
print(f"pass rate: {100 * passed / max(passed + failed, 1):.1f}% of the collected tests "
      f"that ran")
skips = {}
for t in tests:
    if t["outcome"] == "skipped":
        why = (t.get("setup") or {}).get("longrepr") or (t.get("call") or {}).get("longrepr") or ""
        why = str(why).split("Skipped: ")[-1].strip("')\" ")[:100]
        skips[why] = skips.get(why, 0) + 1
for why, n in sorted(skips.items(), key=lambda kv: -kv[1]):
    print(f"  skipped {n}x: {why}")
for t in tests:
    if t["outcome"] in ("failed", "error"):
        msg = (t.get("call") or t.get("setup") or {}).get("crash", {}).get("message", "")
        print(f"  FAILED {t['nodeid']}: {msg.splitlines()[0][:140] if msg else ''}")
EOF
rm -f "$REPORT"
