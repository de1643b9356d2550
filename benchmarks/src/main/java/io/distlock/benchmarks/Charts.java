package io.distlock.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.internal.chartpart.Chart;

/**
 * Writes a run's cost curves as PNG files into the directory {@code -Dbench.charts} names (nothing
 * without it, so the CI smoke run leaves the committed charts alone). BENCHMARKS.md embeds them.
 */
final class Charts {

	private Charts() {
	}

	/** Scenario 1: CPU per pair on each side, stacked per library. */
	static void costs(Map<String, LockBenchmarks.Result> uncontended) {
		Path dir = directory();
		List<String> names = new ArrayList<>();
		List<Double> redis = new ArrayList<>();
		List<Double> client = new ArrayList<>();
		uncontended.forEach((name, result) -> {
			if (result.costs() != null) {
				names.add(name);
				redis.add(result.costs().redisCpuMicros());
				client.add(result.costs().clientCpuMicros());
			}
		});
		if (dir == null || names.isEmpty()) {
			return;
		}
		CategoryChart chart = new CategoryChartBuilder().width(800).height(450)
			.title("Uncontended lock+unlock: CPU per pair")
			.xAxisTitle("library")
			.yAxisTitle("microseconds per pair")
			.build();
		chart.getStyler().setStacked(true);
		chart.addSeries("Redis CPU", names, redis);
		chart.addSeries("client JVM CPU", names, client);
		write(chart, dir.resolve("uncontended-cost.png"));
	}

	/** Scenario 8: acquisitions per second and bytes Redis sends per acquisition, by number of clients. */
	static void clients(Map<Integer, Map<String, LockBenchmarks.Result>> byClients) {
		Path dir = directory();
		if (dir == null) {
			return;
		}
		curve(dir.resolve("clients-throughput.png"), "One key, 2 threads per client: acquisitions per second", "clients",
				"acquisitions/s", false, byClients, count -> count, LockBenchmarks.Result::opsPerSecond);
		curve(dir.resolve("clients-reply-bytes.png"),
				"One key, 2 threads per client: bytes Redis sends per acquisition (replies and pub/sub)", "clients",
				"bytes per acquisition", false, byClients, count -> count, result -> result.costs().replyBytes());
	}

	/** Scenario 14: throughput, Redis CPU per acquisition and lock-plus-wait p99 by instances on one key. */
	static void scale(Map<Integer, Map<String, LockBenchmarks.Result>> byInstances, int threadsPerInstance) {
		Path dir = directory();
		if (dir == null || byInstances.isEmpty()) {
			return;
		}
		String key = "One key, " + threadsPerInstance + " threads per instance: ";
		curve(dir.resolve("scale-throughput.png"), key + "acquisitions per second", "instances", "acquisitions/s", false,
				byInstances, count -> count, LockBenchmarks.Result::opsPerSecond);
		curve(dir.resolve("scale-redis-cpu.png"), key + "Redis CPU per acquisition", "instances", "microseconds", false,
				byInstances, count -> count, result -> result.costs().redisCpuMicros());
		curve(dir.resolve("scale-lock-wait-p99.png"), key + "lock-plus-wait p99", "instances", "milliseconds", true,
				byInstances, count -> count, result -> Math.max(0.01, result.pair().getValueAtPercentile(99) / 1e6));
	}

	/** Scenario 10: uncontended pairs per second and Redis CPU per pair by number of distinct names. */
	static void names(Map<Integer, Map<String, LockBenchmarks.Result>> byNames) {
		Path dir = directory();
		if (dir == null) {
			return;
		}
		curve(dir.resolve("names-throughput.png"), "4 threads, no contention: pairs per second by distinct names", "names",
				"pairs/s", false, byNames, count -> count, LockBenchmarks.Result::opsPerSecond);
		curve(dir.resolve("names-redis-cpu.png"), "4 threads, no contention: Redis CPU per pair by distinct names",
				"names", "microseconds", false, byNames, count -> count, result -> result.costs().redisCpuMicros());
	}

	/** Scenario 9: acquisitions per second and lock-plus-wait p99 by number of waiting threads. */
	static void waiters(Map<String, Map<String, LockBenchmarks.Result>> byWaiters) {
		Path dir = directory();
		if (dir == null) {
			return;
		}
		// "10000 virtual": the number of threads comes first.
		Function<String, Integer> threads = count -> Integer.parseInt(count.split(" ")[0]);
		curve(dir.resolve("waiters-throughput.png"),
				"One key, 4 clients: acquisitions per second by waiting threads (10,000: virtual threads)", "threads",
				"acquisitions/s", false, byWaiters, threads, LockBenchmarks.Result::opsPerSecond);
		curve(dir.resolve("waiters-lock-wait-p99.png"),
				"One key, 4 clients: lock-plus-wait p99 by waiting threads (10,000: virtual threads)", "threads",
				"milliseconds", true, byWaiters, threads,
				result -> Math.max(0.01, result.pair().getValueAtPercentile(99) / 1e6));
	}

	/**
	 * One line per library over a logarithmic x axis, from results by x.
	 * @param logY whether the y axis is logarithmic too (values must then be positive)
	 */
	private static <K> void curve(Path file, String title, String xTitle, String yTitle, boolean logY,
			Map<K, Map<String, LockBenchmarks.Result>> byX, Function<K, Integer> x,
			ToDoubleFunction<LockBenchmarks.Result> y) {
		XYChart chart = new XYChartBuilder().width(900).height(450)
			.title(title)
			.xAxisTitle(xTitle)
			.yAxisTitle(yTitle)
			.build();
		chart.getStyler().setXAxisLogarithmic(true);
		chart.getStyler().setYAxisLogarithmic(logY);
		for (String name : byX.values().iterator().next().keySet()) {
			List<Integer> xs = new ArrayList<>();
			List<Double> ys = new ArrayList<>();
			byX.forEach((key, results) -> {
				LockBenchmarks.Result result = results.get(name);
				if (result != null) {
					xs.add(x.apply(key));
					ys.add(y.applyAsDouble(result));
				}
			});
			chart.addSeries(name, xs, ys);
		}
		write(chart, file);
	}

	private static Path directory() {
		String dir = System.getProperty("bench.charts", "");
		return dir.isBlank() ? null : Path.of(dir);
	}

	/** A chart that cannot be drawn is reported, never at the cost of the run's figures. */
	private static void write(Chart<?, ?> chart, Path file) {
		try {
			Files.createDirectories(file.getParent());
			BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
		}
		catch (IOException | RuntimeException ex) {
			System.err.println("Could not write the chart " + file + ": " + ex);
		}
	}

}
