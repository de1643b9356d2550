package io.distlock.sample.loadtest;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Audits the JMeter results of the inventory load test and fails the build on an oversell.
 *
 * <p>For the locked endpoint: the stock never went below zero, every "sold" answer is accounted for
 * (initial stock - remaining stock = sold answers), and nothing failed except lock timeouts. For the
 * unprotected endpoint the same accounting must <em>not</em> hold: if it does, the load was too light
 * to prove anything, and the check itself is suspect.
 *
 * <p>Arguments: results CSV, initial stock, summary file to write.
 */
public final class LoadTestVerifier {

	private LoadTestVerifier() {
	}

	public static void main(String[] args) throws IOException {
		Path results = Path.of(args[0]);
		long initialStock = Long.parseLong(args[1]);
		Path summaryFile = Path.of(args[2]);
		List<Sample> samples = read(results);
		Phase locked = Phase.of("protected", samples);
		Phase unlocked = Phase.of("unprotected", samples);

		List<String> problems = new ArrayList<>();
		if (locked.attempts() == 0) {
			problems.add("no sale attempts were recorded against the locked endpoint");
		}
		if (locked.negative > 0 || locked.remaining < 0) {
			problems.add("the locked endpoint let the stock go below zero");
		}
		if (locked.sold != initialStock - locked.remaining) {
			problems.add("OVERSELL on the locked endpoint: " + locked.sold + " sold answers but the stock only fell by "
					+ (initialStock - locked.remaining));
		}
		if (locked.other > 0) {
			problems.add(locked.other + " locked sale attempts failed with something other than a lock timeout");
		}
		if (locked.attempts() <= initialStock) {
			problems.add("fewer sale attempts (" + locked.attempts() + ") than stock (" + initialStock + "): no contention");
		}
		if (unlocked.sold <= initialStock - unlocked.remaining) {
			problems.add("the unprotected endpoint did not oversell (" + unlocked.sold + " sold, stock fell by "
					+ (initialStock - unlocked.remaining) + "): the load did not prove the check can fail");
		}

		String summary = summary(initialStock, locked, unlocked, problems);
		Files.createDirectories(summaryFile.toAbsolutePath().getParent());
		Files.writeString(summaryFile, summary);
		System.out.println(summary);
		if (!problems.isEmpty()) {
			throw new IllegalStateException("Inventory load test failed: " + String.join("; ", problems));
		}
	}

	private static String summary(long initialStock, Phase locked, Phase unlocked, List<String> problems) {
		return String.format(Locale.ROOT, """
				# Inventory load test

				Two sample-app instances, one Redis; %d units of stock.

				| endpoint | attempts | sold | sold out | lock timeouts | other errors | stock left | stock fell by | throughput (req/s) | p95 (ms) | error rate |
				|---|---|---|---|---|---|---|---|---|---|---|
				%s
				%s

				%s
				""", initialStock, locked.row(initialStock), unlocked.row(initialStock),
				problems.isEmpty() ? "Verdict: PASS. With the lock every sale is accounted for (" + locked.sold
						+ " sold = " + initialStock + " - " + locked.remaining + ") at " + fmt(locked.throughput())
						+ " req/s, p95 " + locked.p95() + " ms, " + fmt(locked.errorRate()) + "% errors (lock timeouts). "
						+ "Without it the same load sold " + unlocked.sold + " units while the stock fell by only "
						+ (initialStock - unlocked.remaining) + ": an oversell of "
						+ (unlocked.sold - (initialStock - unlocked.remaining)) + "."
						: "Verdict: FAIL. " + String.join("; ", problems));
	}

	private static String fmt(double value) {
		return String.format(Locale.ROOT, "%.1f", value);
	}

	static List<Sample> read(Path results) throws IOException {
		List<String> lines = Files.readAllLines(results);
		if (lines.isEmpty()) {
			throw new IllegalStateException("Empty JMeter results file " + results);
		}
		List<String> header = split(lines.get(0));
		int label = column(header, "label", results);
		int code = column(header, "responseCode", results);
		int elapsed = column(header, "elapsed", results);
		int timeStamp = column(header, "timeStamp", results);
		List<Sample> samples = new ArrayList<>();
		for (String line : lines.subList(1, lines.size())) {
			if (line.isBlank()) {
				continue;
			}
			List<String> fields = split(line);
			samples.add(new Sample(fields.get(label), fields.get(code), Long.parseLong(fields.get(elapsed)),
					Long.parseLong(fields.get(timeStamp))));
		}
		return samples;
	}

	private static int column(List<String> header, String name, Path results) {
		int index = header.indexOf(name);
		if (index < 0) {
			throw new IllegalStateException("No column '" + name + "' in " + results + "; header was " + header);
		}
		return index;
	}

	/** Splits one CSV line, honouring JMeter's double-quoted fields. */
	static List<String> split(String line) {
		List<String> fields = new ArrayList<>();
		StringBuilder field = new StringBuilder();
		boolean quoted = false;
		for (int i = 0; i < line.length(); i++) {
			char c = line.charAt(i);
			if (quoted) {
				if (c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
					field.append('"');
					i++;
				}
				else if (c == '"') {
					quoted = false;
				}
				else {
					field.append(c);
				}
			}
			else if (c == '"') {
				quoted = true;
			}
			else if (c == ',') {
				fields.add(field.toString());
				field.setLength(0);
			}
			else {
				field.append(c);
			}
		}
		fields.add(field.toString());
		return fields;
	}

	record Sample(String label, String code, long elapsed, long timeStamp) {
	}

	/** One phase's tally: sells against one endpoint and the stock read after them. */
	static final class Phase {

		final String name;

		long sold;

		long soldOut;

		long timeouts;

		long other;

		long negative;

		long remaining = Long.MIN_VALUE;

		final List<Long> latencies = new ArrayList<>();

		long first = Long.MAX_VALUE;

		long last = Long.MIN_VALUE;

		Phase(String name) {
			this.name = name.equals("protected") ? "/sell (locked)" : "/sell-unprotected";
		}

		static Phase of(String name, List<Sample> samples) {
			Phase phase = new Phase(name);
			String sell = "sell-" + name + ":";
			String stock = "stock-after-" + name + ":stock=";
			for (Sample sample : samples) {
				if (sample.label().startsWith(stock)) {
					phase.remaining = Long.parseLong(sample.label().substring(stock.length()));
				}
				else if (sample.label().startsWith(sell)) {
					phase.count(sample.label().substring(sell.length()), sample);
				}
			}
			if (phase.remaining == Long.MIN_VALUE) {
				throw new IllegalStateException("No stock reading after the " + name + " phase in the results");
			}
			return phase;
		}

		private void count(String outcome, Sample sample) {
			this.latencies.add(sample.elapsed());
			this.first = Math.min(this.first, sample.timeStamp());
			this.last = Math.max(this.last, sample.timeStamp() + sample.elapsed());
			if (outcome.endsWith("-negative")) {
				this.negative++;
			}
			switch (outcome.replace("-negative", "")) {
				case "sold" -> this.sold++;
				case "soldout" -> this.soldOut++;
				case "503" -> this.timeouts++;
				default -> this.other++;
			}
		}

		long attempts() {
			return this.sold + this.soldOut + this.timeouts + this.other;
		}

		double throughput() {
			long millis = Math.max(1, this.last - this.first);
			return attempts() * 1000.0 / millis;
		}

		long p95() {
			if (this.latencies.isEmpty()) {
				return 0;
			}
			Long[] sorted = this.latencies.toArray(Long[]::new);
			Arrays.sort(sorted);
			return sorted[(int) Math.ceil(sorted.length * 0.95) - 1];
		}

		double errorRate() {
			return (attempts() == 0) ? 0 : 100.0 * (this.timeouts + this.other) / attempts();
		}

		String row(long initialStock) {
			return String.format(Locale.ROOT, "| %s | %d | %d | %d | %d | %d | %d | %d | %.1f | %d | %.1f%% |",
					this.name, attempts(), this.sold, this.soldOut, this.timeouts, this.other,
					this.remaining, initialStock - this.remaining, throughput(), p95(), errorRate());
		}

	}

}
