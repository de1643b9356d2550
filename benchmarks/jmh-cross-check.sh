#!/usr/bin/env bash
# Scenario 1 (uncontended pairs) measured by JMH, a harness independent of LockBenchmarks: a fresh
# JVM and redis-server per library and fork. Prints JMH lines (pairs/s and JMH's 99.9% error) and
# RATIO harness=jmh lines, to set beside the RATIO scenario=uncontended lines of LockBenchmarks.
# Usage (from the repository root), about 4 minutes with the defaults:
#   benchmarks/jmh-cross-check.sh [forks] [iterations of 2 s] [libraries]
#   defaults: 3 5 distlock,naive,redisson,spring-spin
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -q -B -ntp install -DskipTests -Dloadtest.skip=true -Dbench.skip=true -Dchaos.skip=true
classpath="$(mktemp)"
./mvnw -q -B -ntp -pl benchmarks dependency:build-classpath -Dmdep.outputFile="$classpath"
java -cp "benchmarks/target/classes:$(cat "$classpath")" io.distlock.benchmarks.JmhCrossCheck \
  "${1:-3}" "${2:-5}" "${3:-distlock,naive,redisson,spring-spin}"
