package io.distlock.benchmarks;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Cross-checks scenario 1 with JMH ({@link UncontendedPairs}) and prints {@code JMH} lines (pairs
 * per second, JMH's 99.9% error) and {@code RATIO harness=jmh} lines, to be read beside the
 * {@code RATIO scenario=uncontended} lines of {@link LockBenchmarks}.
 *
 * <p>Arguments: forks per library (default 3), measurement iterations of 2 s per fork (default 5),
 * libraries (default {@code distlock,naive,redisson,spring-spin}). Each fork is a JVM of its own
 * ({@code -Xms1g -Xmx1g}, as the harness runs) after 3 warm-up iterations of 2 s.
 */
public final class JmhCrossCheck {

	private JmhCrossCheck() {
	}

	public static void main(String[] args) throws RunnerException {
		int forks = Integer.parseInt(args.length > 0 ? args[0] : "3");
		int iterations = Integer.parseInt(args.length > 1 ? args[1] : "5");
		String[] libraries = (args.length > 2 ? args[2] : "distlock,naive,redisson,spring-spin").split(",");
		Options options = new OptionsBuilder().include(UncontendedPairs.class.getName() + ".lockAndUnlock")
			.param("library", libraries)
			.forks(forks)
			.warmupIterations(3)
			.warmupTime(TimeValue.seconds(2))
			.measurementIterations(iterations)
			.measurementTime(TimeValue.seconds(2))
			.jvmArgs("-Xms1g", "-Xmx1g", "-Djava.awt.headless=true")
			.build();
		Collection<RunResult> results = new Runner(options).run();
		Map<String, Double> pairsPerSecond = new LinkedHashMap<>();
		for (RunResult result : results) {
			String library = result.getParams().getParam("library");
			double score = result.getPrimaryResult().getScore();
			pairsPerSecond.put(library, score);
			System.out.printf("JMH scenario=uncontended lib=%s pairsPerSec=%.0f error=%.0f forks=%d%n", library, score,
					result.getPrimaryResult().getScoreError(), forks);
		}
		Double distlock = pairsPerSecond.get("distlock");
		if (distlock == null) {
			return;
		}
		pairsPerSecond.forEach((library, score) -> {
			if (!library.equals("distlock")) {
				System.out.printf("RATIO harness=jmh scenario=uncontended distlock/%s throughput=%.2f%n", library,
						distlock / score);
			}
		});
	}

}
