package io.distlock.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

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
		XYChart throughput = new XYChartBuilder().width(800).height(450)
			.title("One key, 2 threads per client: acquisitions per second")
			.xAxisTitle("clients")
			.yAxisTitle("acquisitions/s")
			.build();
		XYChart bytes = new XYChartBuilder().width(800).height(450)
			.title("One key, 2 threads per client: bytes Redis sends per acquisition (replies and pub/sub)")
			.xAxisTitle("clients")
			.yAxisTitle("bytes per acquisition")
			.build();
		throughput.getStyler().setXAxisLogarithmic(true);
		bytes.getStyler().setXAxisLogarithmic(true);
		for (String name : byClients.values().iterator().next().keySet()) {
			List<Integer> clients = new ArrayList<>();
			List<Double> acquisitions = new ArrayList<>();
			List<Double> replyBytes = new ArrayList<>();
			byClients.forEach((count, results) -> {
				LockBenchmarks.Result result = results.get(name);
				if (result != null) {
					clients.add(count);
					acquisitions.add(result.opsPerSecond());
					replyBytes.add(result.costs().replyBytes());
				}
			});
			throughput.addSeries(name, clients, acquisitions);
			bytes.addSeries(name, clients, replyBytes);
		}
		write(throughput, dir.resolve("clients-throughput.png"));
		write(bytes, dir.resolve("clients-reply-bytes.png"));
	}

	/** Scenario 9: acquisitions per second and lock-plus-wait p99 by number of waiting threads. */
	static void waiters(Map<String, Map<String, LockBenchmarks.Result>> byWaiters) {
		Path dir = directory();
		if (dir == null) {
			return;
		}
		XYChart throughput = new XYChartBuilder().width(900).height(450)
			.title("One key, 4 clients: acquisitions per second by waiting threads (10,000: virtual threads)")
			.xAxisTitle("threads")
			.yAxisTitle("acquisitions/s")
			.build();
		XYChart tail = new XYChartBuilder().width(900).height(450)
			.title("One key, 4 clients: lock-plus-wait p99 by waiting threads (10,000: virtual threads)")
			.xAxisTitle("threads")
			.yAxisTitle("milliseconds")
			.build();
		throughput.getStyler().setXAxisLogarithmic(true);
		tail.getStyler().setXAxisLogarithmic(true);
		tail.getStyler().setYAxisLogarithmic(true);
		for (String name : byWaiters.values().iterator().next().keySet()) {
			List<Integer> threads = new ArrayList<>();
			List<Double> acquisitions = new ArrayList<>();
			List<Double> p99 = new ArrayList<>();
			byWaiters.forEach((count, results) -> {
				LockBenchmarks.Result result = results.get(name);
				if (result != null) {
					threads.add(Integer.parseInt(count.split(" ")[0]));
					acquisitions.add(result.opsPerSecond());
					p99.add(Math.max(0.01, result.pair().getValueAtPercentile(99) / 1e6));
				}
			});
			throughput.addSeries(name, threads, acquisitions);
			tail.addSeries(name, threads, p99);
		}
		write(throughput, dir.resolve("waiters-throughput.png"));
		write(tail, dir.resolve("waiters-lock-wait-p99.png"));
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
