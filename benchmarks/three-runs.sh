#!/usr/bin/env bash
# Runs the timed scenarios three times and the memory scenario once, then prints, per RESULT key,
# the median of the three runs. Usage (from the repository root):
#   benchmarks/three-runs.sh [duration] [warm-up] [names]      defaults: PT5S PT2S 1000000
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-PT5S}"; warmup="${2:-PT2S}"; names="${3:-1000000}"
out="$(mktemp -d)"
./mvnw -q -B -ntp install -DskipTests -Dloadtest.skip=true -Dbench.skip=true -Dchaos.skip=true
for run in 1 2 3; do
  ./mvnw -q -B -ntp -pl benchmarks verify -Dbench.duration="$duration" -Dbench.warmup="$warmup" \
    -Dbench.scenarios=uncontended,contended,redlock,annotation,zookeeper | tee "$out/run$run.txt"
done
./mvnw -q -B -ntp -pl benchmarks verify -Dbench.duration=PT1S -Dbench.warmup=PT1S -Dbench.names="$names" \
  -Dbench.scenarios=memory | tee "$out/memory.txt"
echo
echo "Medians of three runs (RESULT lines; each field the median of its three values):"
grep -h '^RESULT' "$out"/run*.txt | awk '
  { key = $2 " " $3; n[key]++; order[key] = order[key] ? order[key] : ++keys; names[order[key]] = key
    for (i = 4; i <= NF; i++) { split($i, kv, "="); field[key, i] = kv[1]; v[key, i, n[key]] = kv[2] + 0; nf[key] = NF } }
  END {
    for (k = 1; k <= keys; k++) {
      key = names[k]; line = "MEDIAN " key
      for (i = 4; i <= nf[key]; i++) {
        a = v[key, i, 1]; b = v[key, i, 2]; c = v[key, i, 3]
        m = (a > b) ? ((b > c) ? b : ((a > c) ? c : a)) : ((a > c) ? a : ((b > c) ? c : b))
        line = line " " field[key, i] "=" m
      }
      print line
    } }'
grep -h '^RESULT scenario=memory' "$out/memory.txt"
echo "(raw output in $out)"
