package io.distlock.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Writes a soak's results as the Markdown table RELIABILITY.md quotes, and lists what failed it.
 */
final class SoakReport {

	private SoakReport() {
	}

	static String markdown(List<ChaosSoak.RunResult> runs, ChaosSoak.Timing timing, boolean sanity, Duration took) {
		StringBuilder out = new StringBuilder();
		out.append(String.format(Locale.ROOT,
				"Chaos soak%s: %d clients x %d threads over %d keys, watchdog timeout %d s, wait %d s; "
						+ "phases of %d s calm, the fault, %d s recovery; %d round(s); took %d s; Java %s, %d cores.%n%n",
				sanity ? " (SANITY: no locking)" : "", ChaosSoak.CLIENTS, ChaosSoak.THREADS, ChaosSoak.KEYS,
				ChaosSoak.WATCHDOG.toSeconds(), ChaosSoak.WAIT.toSeconds(), timing.calm().toSeconds(),
				timing.recovery().toSeconds(), timing.rounds(), took.toSeconds(), System.getProperty("java.version"),
				Runtime.getRuntime().availableProcessors()));
		for (ChaosSoak.RunResult run : runs) {
			out.append("### ").append(run.name()).append(": ").append(run.backend()).append("\n\n");
			out.append("| phase | exclusive? | holds | overlaps (ms) | lost updates | fenced accepted / rejected | "
					+ "stale accepted | tokens out of order | lost at unlock | failed acquire / unlock | timed out | max overrun ms | "
					+ "holds/s before / during / after | recovery s | verdict |\n");
			out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
			for (HistoryChecker.PhaseResult result : run.results()) {
				List<String> violations = result.violations();
				out.append(String.format(Locale.ROOT,
						"| %s | %s | %d | %d (%.0f) | %d | %s | %s | %s | %d | %d / %d | %d | %.0f | %.0f / %.0f / %.0f | %s | %s |%n",
						result.window().name(), result.window().exclusive() ? "must" : "not expected",
						result.acquisitions(), result.overlaps(), result.overlapMillis(), result.plainLost(),
						(result.fencedAccepted() < 0) ? "no tokens" : result.fencedAccepted() + " / " + result.fencedRejected(),
						(result.fencedAccepted() < 0) ? "n/a" : Long.toString(result.staleAccepted()),
						(result.fencedAccepted() < 0) ? "n/a" : result.tokensOutOfOrder()
								+ ((result.tokensInDoubt() > 0) ? " (" + result.tokensInDoubt() + " in doubt)" : ""),
						result.lostAtUnlock(), result.acquireFailures(), result.unlockFailures(), result.notAcquired(),
						result.maxOverrunMillis(), result.rateBefore(), result.rateDuring(), result.rateAfter(),
						(result.recoverySeconds() < 0) ? "not in phase" : String.format(Locale.ROOT, "%.2f", result.recoverySeconds()),
						violations.isEmpty() ? "ok" : "**" + String.join("; ", violations) + "**"));
			}
			out.append("\nFaults: ");
			out.append(String.join("; ",
					run.results().stream().map(result -> result.window().name() + " = " + result.window().fault()).toList()));
			out.append(String.format(Locale.ROOT, "%n%nLost-hold notices to listeners: %d. %s%n%n", run.lostNotices(),
					run.leftovers().description()));
			if (!run.errors().isEmpty()) {
				out.append("Failures the clients saw (count, kind):\n\n");
				run.errors().entrySet().stream()
					.sorted((a, b) -> b.getValue() - a.getValue())
					.limit(12)
					.forEach(error -> out.append("- ").append(error.getValue()).append(" × `")
						.append(error.getKey().replace('`', '\'')).append("`\n"));
				out.append('\n');
			}
		}
		return out.toString();
	}

	static List<String> violations(List<ChaosSoak.RunResult> runs) {
		List<String> violations = new ArrayList<>();
		for (ChaosSoak.RunResult run : runs) {
			if (run.unplaced() > 0) {
				violations.add(run.name() + ": " + run.unplaced() + " records outside every phase window");
			}
			if (!run.leftovers().stuck().isEmpty()) {
				violations.add(run.name() + ": locks that nobody can take again " + run.leftovers().stuck());
			}
			for (HistoryChecker.PhaseResult result : run.results()) {
				for (String violation : result.violations()) {
					violations.add(run.name() + "/" + result.window().name() + ": " + violation);
				}
			}
		}
		return violations;
	}

}
