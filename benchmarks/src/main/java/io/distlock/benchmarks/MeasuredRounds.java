package io.distlock.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

import org.HdrHistogram.Histogram;

import io.distlock.embedded.RedisServerProcess;

/**
 * A scenario measured as a user would see it (scenario 1 and scenario 7's three): several rounds,
 * each library measured once per round on a client of its own, warmed on that client just before its window, with the order of the libraries
 * rotated from round to round and a full GC before every window. One pass in a fixed order is
 * sensitive to where a library falls in it (the garbage and the background threads the libraries
 * before it left, the load the rest of the machine happens to put on the two processes), and a
 * single ratio hides how much of it is noise; the rounds give every library every position and the
 * report the median and the spread of the per-round ratios.
 */
final class MeasuredRounds {

	private MeasuredRounds() {
	}

	/**
	 * @param rounds how many times each library is measured
	 * @param threads calling threads, a key each, on one client
	 * @param rotate whether the order of the libraries moves by one each round
	 * @param gcBeforeWindow whether a full GC runs before each library's client is made, so that no
	 * library pays for the garbage of the one before it
	 */
	record Options(int rounds, int threads, boolean rotate, boolean gcBeforeWindow) {

		/** The default run: {@code -Dbench.uncontended.rounds} rounds (3 when unset), 4 threads. */
		static Options defaults() {
			return fromProperty("bench.uncontended.rounds", 4);
		}

		/** {@code property}'s number of rounds (3 when unset), rotated, a GC before each window. */
		static Options fromProperty(String property, int threads) {
			String rounds = System.getProperty(property, "");
			return new Options(rounds.isBlank() ? 3 : Math.max(1, Integer.parseInt(rounds.trim())), threads, true, true);
		}

	}

	/**
	 * One library's rounds.
	 * @param rounds each round's result, in the order run
	 */
	record Rounds(List<LockBenchmarks.Result> rounds) {

		/**
		 * @return the median round's throughput, the pairs' latencies over all rounds, and each cost
		 * the median of the rounds' (what the RESULT and COST lines print)
		 */
		LockBenchmarks.Result summary() {
			Histogram pairs = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
			this.rounds.forEach(round -> pairs.add(round.pair()));
			Histogram handoffs = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
			this.rounds.forEach(round -> handoffs.add(round.handoff()));
			CostMeter.Costs costs = null;
			if (this.rounds.stream().allMatch(round -> round.costs() != null)) {
				costs = new CostMeter.Costs(cost(CostMeter.Costs::redisCpuMicros), cost(CostMeter.Costs::commands),
						cost(CostMeter.Costs::requestBytes), cost(CostMeter.Costs::replyBytes),
						cost(CostMeter.Costs::clientCpuMicros), cost(CostMeter.Costs::allocatedBytes),
						cost(CostMeter.Costs::callerAllocatedBytes));
			}
			return new LockBenchmarks.Result(median(this.rounds.stream().mapToDouble(LockBenchmarks.Result::opsPerSecond).toArray()),
					pairs, handoffs, median(this.rounds.stream().mapToDouble(LockBenchmarks.Result::fairness).toArray()), costs);
		}

		private double cost(ToDoubleFunction<CostMeter.Costs> field) {
			return median(this.rounds.stream().mapToDouble(round -> field.applyAsDouble(round.costs())).toArray());
		}

	}

	/**
	 * Runs the rounds; a library's result is kept by round, whatever its position in that round.
	 * @return each library's rounds, in the order of {@code contenders}
	 */
	static Map<String, Rounds> run(List<Contender> contenders, RedisServerProcess redis, Duration warmup,
			Duration duration, Options options) throws Exception {
		return run(contenders, options, contender -> {
			LockBenchmarks.Result result = LockBenchmarks.uncontended(contender, options.threads(), warmup, duration,
					new CostMeter(redis));
			redis.command("FLUSHALL");
			return result;
		});
	}

	/** One library's window: a client of its own, warmed, then measured. */
	interface Window {

		LockBenchmarks.Result measure(Contender contender) throws Exception;

	}

	/** As above, each library's window being {@code window}'s. */
	static Map<String, Rounds> run(List<Contender> contenders, Options options, Window window) throws Exception {
		Map<String, List<LockBenchmarks.Result>> byLibrary = new LinkedHashMap<>();
		contenders.forEach(contender -> byLibrary.put(contender.name(), new ArrayList<>()));
		for (int round = 0; round < options.rounds(); round++) {
			List<Contender> order = new ArrayList<>(contenders);
			if (options.rotate()) {
				java.util.Collections.rotate(order, -round);
			}
			for (Contender contender : order) {
				if (options.gcBeforeWindow()) {
					System.gc();
				}
				byLibrary.get(contender.name()).add(window.measure(contender));
			}
		}
		Map<String, Rounds> rounds = new LinkedHashMap<>();
		byLibrary.forEach((name, results) -> rounds.put(name, new Rounds(results)));
		return rounds;
	}

	/**
	 * @return {@code subject}'s throughput over each peer's, the median of the per-round ratios with
	 * their min-max spread, appended to the RATIO line's existing fields (p50 and p99 over all rounds)
	 */
	static List<String> ratios(Map<String, Rounds> rounds, String subject) {
		return ratios(rounds, subject, "uncontended");
	}

	/** As above, for the scenario named {@code scenario} in the RATIO line. */
	static List<String> ratios(Map<String, Rounds> rounds, String subject, String scenario) {
		List<String> lines = new ArrayList<>();
		Rounds ours = rounds.get(subject);
		if (ours == null) {
			return lines;
		}
		LockBenchmarks.Result oursSummary = ours.summary();
		rounds.forEach((name, peer) -> {
			if (name.equals(subject)) {
				return;
			}
			double[] perRound = new double[Math.min(ours.rounds().size(), peer.rounds().size())];
			for (int round = 0; round < perRound.length; round++) {
				perRound[round] = ours.rounds().get(round).opsPerSecond()
						/ Math.max(1, peer.rounds().get(round).opsPerSecond());
			}
			LockBenchmarks.Result peerSummary = peer.summary();
			lines.add(String.format(Locale.ROOT,
					"RATIO scenario=%s %s/%s throughput=%.2f p50=%.2f p99=%.2f spread=%.2f-%.2f rounds=%d", scenario, subject,
					name, median(perRound), (double) oursSummary.pair().getValueAtPercentile(50)
							/ Math.max(1, peerSummary.pair().getValueAtPercentile(50)),
					(double) oursSummary.pair().getValueAtPercentile(99)
							/ Math.max(1, peerSummary.pair().getValueAtPercentile(99)),
					Arrays.stream(perRound).min().orElse(0), Arrays.stream(perRound).max().orElse(0), perRound.length));
		});
		return lines;
	}

	/** @return each library's pairs per second in every round, for the table's reader */
	static List<String> perRound(Map<String, Rounds> rounds) {
		List<String> lines = new ArrayList<>();
		rounds.forEach((name, library) -> lines.add(String.format(Locale.ROOT, "%-14s %s", name, String.join(" ",
				library.rounds().stream().map(round -> String.format(Locale.ROOT, "%10.0f", round.opsPerSecond())).toList()))));
		return lines;
	}

	static double median(double[] values) {
		if (values.length == 0) {
			return 0;
		}
		double[] sorted = values.clone();
		Arrays.sort(sorted);
		int middle = sorted.length / 2;
		return (sorted.length % 2 == 1) ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
	}

}
