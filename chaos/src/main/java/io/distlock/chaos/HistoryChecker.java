package io.distlock.chaos;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a run's history and says, per phase, what the locks kept and what they did not: overlapping
 * holds of one key by different owners, updates lost on the plain counter, stale writes the fenced
 * resource accepted, holds lost, callers stuck past their wait, throughput around the fault. It
 * knows nothing about how the locks work, only what the clients logged and what the resource holds
 * at the end, so a run without locks fails it (see {@code --sanity}).
 */
public final class HistoryChecker {

	/** A {@code tryLock} that returns this much later than its wait is a stuck caller. */
	static final long STUCK_NANOS = 10_000_000_000L;

	private HistoryChecker() {
	}

	/**
	 * The final counters the resource holds for one phase and key.
	 * @param plain the plain counter
	 * @param fenced the fenced counter
	 */
	public record Counters(long plain, long fenced) {
	}

	/**
	 * How soon after a thaw a frozen thread records a hold it took as the freeze began: it only has
	 * to be scheduled again. A hold recorded later was taken by a call made after the thaw.
	 */
	static final long THAWED_NANOS = 1_000_000_000L;

	/**
	 * What one phase showed.
	 * @param window the phase
	 * @param attempts every {@code tryLock}
	 * @param acquisitions the holds
	 * @param notAcquired the waits that ran out
	 * @param acquireFailures the {@code tryLock}s that threw
	 * @param overlaps pairs of holds of one key by different owners that overlapped in time
	 * @param overlapMillis how long they overlapped, in all
	 * @param plainLost updates lost on the plain counter
	 * @param fencedAccepted writes the fenced resource accepted ({@code -1}: no fencing tokens)
	 * @param fencedRejected writes it rejected
	 * @param staleAccepted stale writes it accepted: updates lost on the fenced counter
	 * @param tokensOutOfOrder holds whose fencing token was not above that of every earlier holder of
	 * the key (another owner's equal token counts too)
	 * @param tokensInDoubt holds of a frozen client, taken as the freeze began, whose token was below
	 * a holder's that began during the freeze: the record cannot tell whether the hold was taken
	 * before that holder (no offence) or after it; shown, not counted as a violation
	 * @param incomplete writes the resource holds that no record accounts for: a history with gaps
	 * @param lostAtUnlock holds whose {@code unlock()} said they had been lost
	 * @param unlockFailures {@code unlock()}s that failed otherwise
	 * @param maxOverrunMillis the longest a {@code tryLock} ran past its wait
	 * @param rateBefore holds per second before the fault
	 * @param rateDuring holds per second during the fault
	 * @param rateAfter holds per second after the fault
	 * @param recoverySeconds from the fault's end to the first second with at least half the rate
	 * before it; {@code -1} if the phase ended first
	 */
	public record PhaseResult(PhaseWindow window, int attempts, int acquisitions, int notAcquired, int acquireFailures,
			int overlaps, double overlapMillis, long plainLost, long fencedAccepted, long fencedRejected,
			long staleAccepted, int tokensOutOfOrder, int tokensInDoubt, long incomplete, int lostAtUnlock, int unlockFailures, double maxOverrunMillis, double rateBefore,
			double rateDuring, double rateAfter, double recoverySeconds) {

		/** @return what a correct lock must not have let happen in this phase, empty if nothing */
		public List<String> violations() {
			List<String> violations = new ArrayList<>();
			if (this.window.exclusive() && this.overlaps > 0) {
				violations.add(this.overlaps + " overlapping holds (" + Math.round(this.overlapMillis) + " ms)");
			}
			if (this.window.exclusive() && this.plainLost > 0) {
				violations.add(this.plainLost + " lost updates");
			}
			if (this.staleAccepted > 0) {
				violations.add(this.staleAccepted + " stale writes accepted by the fenced resource");
			}
			if (this.window.exclusive() && this.fencedRejected > 0) {
				// Only a holder that is no longer the latest writes with a lower token.
				violations.add(this.fencedRejected + " fenced writes rejected where no stale holder should exist");
			}
			if (this.tokensOutOfOrder > 0) {
				violations.add(this.tokensOutOfOrder + " fencing tokens not above an earlier holder's");
			}
			if (this.incomplete > 0) {
				violations.add(this.incomplete + " writes in the resource that no record accounts for");
			}
			if (this.window.problem() != null) {
				violations.add("the fault did not happen as described: " + this.window.problem());
			}
			if (this.maxOverrunMillis * 1_000_000 > STUCK_NANOS) {
				violations.add("a caller stuck " + Math.round(this.maxOverrunMillis) + " ms past its wait");
			}
			return violations;
		}

	}

	/**
	 * @param windows the run's phases, in order
	 * @param records every client's records
	 * @param counters the resource's final counters by phase name, then key
	 * @param fencing whether the backend hands out fencing tokens
	 * @return one result per phase
	 */
	public static List<PhaseResult> check(List<PhaseWindow> windows, List<HoldRecord> records,
			Map<String, Map<String, Counters>> counters, boolean fencing) {
		Map<String, int[]> overlapsByPhase = new HashMap<>();
		Map<String, double[]> overlapMillisByPhase = new HashMap<>();
		countOverlaps(windows, records, overlapsByPhase, overlapMillisByPhase);
		Map<String, int[]> tokensOutOfOrder = tokensOutOfOrder(windows, records);
		List<PhaseResult> results = new ArrayList<>();
		for (PhaseWindow window : windows) {
			List<HoldRecord> inWindow = records.stream().filter(record -> window.contains(record.waitStart())).toList();
			List<HoldRecord> readInPhase = records.stream().filter(record -> window.name().equals(record.phase())).toList();
			int acquisitions = (int) inWindow.stream().filter(record -> record.outcome().held()).count();
			Map<String, long[]> writesByKey = new HashMap<>();
			long fencedRejected = 0;
			for (HoldRecord record : readInPhase) {
				long[] writes = writesByKey.computeIfAbsent(record.key(), key -> new long[2]);
				if (record.plainWritten()) {
					writes[0]++;
				}
				if (record.fenced() == HoldRecord.Fenced.ACCEPTED) {
					writes[1]++;
				}
				else if (record.fenced() == HoldRecord.Fenced.REJECTED) {
					fencedRejected++;
				}
			}
			long plainLost = 0;
			long fencedAccepted = 0;
			long staleAccepted = 0;
			long incomplete = 0;
			Map<String, Counters> finals = counters.getOrDefault(window.name(), Map.of());
			for (Map.Entry<String, long[]> entry : writesByKey.entrySet()) {
				Counters last = finals.getOrDefault(entry.getKey(), new Counters(0, 0));
				// Each write stores what its section read plus one: writes that read the same value
				// leave the counter short of the number of writes.
				plainLost += Math.max(0, entry.getValue()[0] - last.plain());
				fencedAccepted += entry.getValue()[1];
				staleAccepted += Math.max(0, entry.getValue()[1] - last.fenced());
				// More in the resource than recorded would offset lost updates: it must be reported, not netted.
				incomplete += Math.max(0, last.plain() - entry.getValue()[0]) + Math.max(0, last.fenced() - entry.getValue()[1]);
			}
			for (Map.Entry<String, Counters> entry : finals.entrySet()) {
				if (!writesByKey.containsKey(entry.getKey())) {
					incomplete += entry.getValue().plain() + entry.getValue().fenced();
				}
			}
			double maxOverrun = inWindow.stream()
				.filter(record -> !pausedThrough(window, record))
				.mapToLong(HoldRecord::overrunNanos)
				.max()
				.orElse(0) / 1e6;
			double before = rate(inWindow, window.start(), window.faultStart());
			double during = rate(inWindow, window.faultStart(), window.faultEnd());
			double after = rate(inWindow, window.faultEnd(), window.end());
			results.add(new PhaseResult(window, inWindow.size(), acquisitions,
					(int) inWindow.stream().filter(record -> record.outcome() == HoldRecord.Outcome.NOT_ACQUIRED).count(),
					(int) inWindow.stream().filter(record -> record.outcome() == HoldRecord.Outcome.ACQUIRE_FAILED).count(),
					overlapsByPhase.getOrDefault(window.name(), new int[1])[0],
					overlapMillisByPhase.getOrDefault(window.name(), new double[1])[0], plainLost,
					fencing ? fencedAccepted : -1, fencedRejected, fencing ? staleAccepted : 0,
					fencing ? tokensOutOfOrder.getOrDefault(window.name(), new int[2])[0] : 0,
					fencing ? tokensOutOfOrder.getOrDefault(window.name(), new int[2])[1] : 0, incomplete,
					(int) inWindow.stream().filter(record -> record.outcome() == HoldRecord.Outcome.LOST).count(),
					(int) inWindow.stream().filter(record -> record.outcome() == HoldRecord.Outcome.UNLOCK_FAILED).count(),
					maxOverrun, before, during, after, recovery(inWindow, window, before)));
		}
		return results;
	}

	/**
	 * @return the window whose freeze caught the hold's client between taking the lock and recording
	 * it (waiting as the freeze began, and recorded right after the thaw), or {@code null}
	 */
	private static PhaseWindow frozenAsTaken(List<PhaseWindow> windows, HoldRecord hold) {
		for (PhaseWindow window : windows) {
			if (hold.client().equals(window.pausedClient()) && hold.waitStart() <= window.faultStart()
					&& hold.start() >= window.faultStart() && hold.start() - window.faultEnd() < THAWED_NANOS) {
				return window;
			}
		}
		return null;
	}

	private static boolean pausedThrough(PhaseWindow window, HoldRecord record) {
		return record.client().equals(window.pausedClient()) && record.waitStart() < window.faultEnd()
				&& record.start() > window.faultStart();
	}

	/**
	 * Counts pairs of holds of one key, by different owners, that overlap in time; each pair belongs
	 * to the phase in which the later of the two began.
	 */
	private static void countOverlaps(List<PhaseWindow> windows, List<HoldRecord> records, Map<String, int[]> counts,
			Map<String, double[]> millis) {
		Map<String, List<HoldRecord>> byKey = new HashMap<>();
		for (HoldRecord record : records) {
			if (record.outcome().held()) {
				byKey.computeIfAbsent(record.key(), key -> new ArrayList<>()).add(record);
			}
		}
		for (List<HoldRecord> holds : byKey.values()) {
			holds.sort(Comparator.comparingLong(HoldRecord::start));
			List<HoldRecord> open = new ArrayList<>();
			for (HoldRecord hold : holds) {
				open.removeIf(earlier -> earlier.end() <= hold.start());
				for (HoldRecord earlier : open) {
					if (!earlier.owner().equals(hold.owner())) {
						String phase = phaseAt(windows, hold.start());
						counts.computeIfAbsent(phase, name -> new int[1])[0]++;
						millis.computeIfAbsent(phase, name -> new double[1])[0] += (Math.min(earlier.end(), hold.end())
								- hold.start()) / 1e6;
					}
				}
				open.add(hold);
			}
		}
	}

	/**
	 * Per key, in the order holds began: a token must be above every token an earlier holder of
	 * another owner had (an owner taking up its own hold again keeps its token). Each offence
	 * belongs to the phase in which the later hold began.
	 *
	 * <p>A frozen client's acquisition that was answered just as the freeze began is placed in time
	 * only by its own clock, which records the hold's start after the thaw: it may have been taken
	 * before every hold that began during the freeze. Its token is held for certain only against
	 * holders that began before the freeze; being below a later one is counted as in doubt.
	 *
	 * @return per phase, the offences (index 0) and those in doubt (index 1)
	 */
	private static Map<String, int[]> tokensOutOfOrder(List<PhaseWindow> windows, List<HoldRecord> records) {
		Map<String, List<HoldRecord>> byKey = new HashMap<>();
		for (HoldRecord record : records) {
			if (record.outcome().held() && record.token() >= 0) {
				byKey.computeIfAbsent(record.key(), key -> new ArrayList<>()).add(record);
			}
		}
		Map<String, int[]> offences = new HashMap<>();
		for (List<HoldRecord> holds : byKey.values()) {
			holds.sort(Comparator.comparingLong(HoldRecord::start));
			long highest = -1;
			String highestOwner = null;
			for (int i = 0; i < holds.size(); i++) {
				HoldRecord hold = holds.get(i);
				if (hold.token() < highest || (hold.token() == highest && !hold.owner().equals(highestOwner))) {
					PhaseWindow freeze = frozenAsTaken(windows, hold);
					// Rare: scanned against the holds that had certainly begun before it.
					boolean certain = freeze == null || holds.subList(0, i).stream()
						.anyMatch(before -> before.start() < freeze.faultStart() && !before.owner().equals(hold.owner())
								&& before.token() >= hold.token());
					offences.computeIfAbsent(phaseAt(windows, hold.start()), name -> new int[2])[certain ? 0 : 1]++;
				}
				if (hold.token() > highest) {
					highest = hold.token();
					highestOwner = hold.owner();
				}
			}
		}
		return offences;
	}

	/**
	 * @return how many records fall in no window: the windows must cover the whole run, or what
	 * happened between them would go unchecked
	 */
	public static long unplaced(List<PhaseWindow> windows, List<HoldRecord> records) {
		return records.stream().filter(record -> windows.stream().noneMatch(window -> window.contains(record.waitStart())))
			.count();
	}

	private static String phaseAt(List<PhaseWindow> windows, long nanos) {
		for (PhaseWindow window : windows) {
			if (window.contains(nanos)) {
				return window.name();
			}
		}
		return "-";
	}

	private static double rate(List<HoldRecord> records, long from, long to) {
		if (to <= from) {
			return 0;
		}
		long holds = records.stream().filter(record -> record.outcome().held())
			.filter(record -> record.start() >= from && record.start() < to)
			.count();
		return holds / ((to - from) / 1e9);
	}

	private static double recovery(List<HoldRecord> records, PhaseWindow window, double before) {
		long second = 1_000_000_000L;
		for (long from = window.faultEnd(); from + second <= window.end(); from += second / 4) {
			if (rate(records, from, from + second) >= before / 2) {
				return (from - window.faultEnd()) / 1e9;
			}
		}
		return -1;
	}

}
