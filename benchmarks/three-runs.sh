#!/usr/bin/env bash
# Runs the timed scenarios three times (the Redis Cluster scenario on 3 and 6 masters among them) and
# the memory scenario once, then prints, per RESULT key, the median of the three runs, and each run's
# uncontended ratios (themselves medians of rounds, with their spread). Usage (from the repository root):
#   benchmarks/three-runs.sh [duration] [warm-up] [names] [cluster masters]
#   defaults: PT5S PT2S 1000000 3,6
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-PT5S}"; warmup="${2:-PT2S}"; names="${3:-1000000}"; masters="${4:-3,6}"
out="$(mktemp -d)"
./mvnw -q -B -ntp install -DskipTests -Dloadtest.skip=true -Dbench.skip=true -Dchaos.skip=true
for run in 1 2 3; do
  ./mvnw -q -B -ntp -pl benchmarks verify -Dbench.duration="$duration" -Dbench.warmup="$warmup" \
    -Dbench.scenarios=uncontended,contended,redlock,annotation,zookeeper,cluster -Dbench.cluster.masters="$masters" \
    | tee "$out/run$run.txt"
done
./mvnw -q -B -ntp -pl benchmarks verify -Dbench.duration=PT1S -Dbench.warmup=PT1S -Dbench.names="$names" \
  -Dbench.scenarios=memory | tee "$out/memory.txt"
echo
echo "Medians of three runs (RESULT lines; each field the median of its three values):"
# A line's key is its scenario and library plus the fields that say which set-up it measured (the
# cluster scenario's masters and keys, the clients, names, threads or instances of others).
grep -h '^RESULT' "$out"/run*.txt | awk '
  function setup(name) { return name ~ /^(masters|keys|clients|names|threads|instances)$/ }
  { key = $2 " " $3
    for (i = 4; i <= NF; i++) { split($i, kv, "="); if (setup(kv[1])) key = key " " $i }
    n[key]++; order[key] = order[key] ? order[key] : ++keys; names[order[key]] = key
    for (i = 4; i <= NF; i++) { split($i, kv, "="); field[key, i] = kv[1]; v[key, i, n[key]] = kv[2] + 0; nf[key] = NF } }
  END {
    for (k = 1; k <= keys; k++) {
      key = names[k]; line = "MEDIAN " key
      for (i = 4; i <= nf[key]; i++) {
        if (setup(field[key, i])) continue
        a = v[key, i, 1]; b = v[key, i, 2]; c = v[key, i, 3]
        m = (a > b) ? ((b > c) ? b : ((a > c) ? c : a)) : ((a > c) ? a : ((b > c) ? c : b))
        line = line " " field[key, i] "=" m
      }
      print line
    } }'
echo
echo "Scenario 1's ratios, run by run (each the median of its rounds, with their spread):"
grep -h '^RATIO scenario=uncontended' "$out"/run*.txt
grep -h '^RESULT scenario=memory' "$out/memory.txt"
echo "(raw output in $out)"
