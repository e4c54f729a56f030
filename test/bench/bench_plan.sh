#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Planning speed on generated graphs (test/bench/gen_graph.py): skc check and skc plan --format
# json on 100,000 operators and on ten times as many; median wall time of the repetitions.
#   test/bench/bench_plan.sh [operators] [repetitions]
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-100000}
REPS=${2:-5}
. test/bench/common.sh
bench_build
W=$(mktemp -d "${TMPDIR:-/tmp}/skforge-plan.XXXXXX")
trap 'rm -rf "$W"' EXIT
echo "| operators | graph size | skc check | skc plan --format json | check + plan |"
echo "|---|---|---|---|---|"
declare -A plan_time
for n in "$N" $((N * 10)); do
    python3 test/bench/gen_graph.py "$W/g$n" "$n"
    cat "$W/g$n/graph.yaml" >/dev/null
    c=$(measure ':' "$SKC" check "$W/g$n/graph.yaml")
    p=$(measure ':' "$SKC" plan --format json "$W/g$n/graph.yaml")
    plan_time[$n]=$(echo "$c + $p" | bc -l)
    printf '| %d | %d MiB | %.2f s | %.2f s | %.2f s |\n' "$n" $(($(stat -c %s "$W/g$n/graph.yaml") / 1048576)) "$c" "$p" "${plan_time[$n]}"
    rm -rf "$W/g$n"
done
printf '\nscaling: 10x the operators took %.1fx the time (check + plan)\n' \
    "$(echo "${plan_time[$((N * 10))]} / ${plan_time[$N]}" | bc -l)"
