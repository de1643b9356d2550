package io.distlock.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.distlock.chaos.HistoryChecker.Counters;
import io.distlock.chaos.HistoryChecker.PhaseResult;
import io.distlock.chaos.HoldRecord.Fenced;
import io.distlock.chaos.HoldRecord.Outcome;

/** The checker on hand-written histories: it finds what it must, and nothing where nothing happened. */
class HistoryCheckerTest {

	private static final long MS = 1_000_000;

	private final PhaseWindow exclusive = new PhaseWindow("p", "fault", 0, 1000 * MS, 2000 * MS, 4000 * MS, true, null, null);

	@Test
	void holdsOneAfterAnotherAreClean() {
		List<HoldRecord> records = List.of(hold("c1-t0", 10, 20, 1, Fenced.ACCEPTED), hold("c2-t0", 20, 30, 2, Fenced.ACCEPTED),
				hold("c1-t1", 31, 40, 3, Fenced.ACCEPTED));
		PhaseResult result = check(records, 3, 3);
		assertThat(result.acquisitions()).isEqualTo(3);
		assertThat(result.overlaps()).isZero();
		assertThat(result.plainLost()).isZero();
		assertThat(result.staleAccepted()).isZero();
		assertThat(result.violations()).isEmpty();
	}

	@Test
	void overlappingHoldsOfDifferentOwnersAndTheirLostUpdatesAreViolations() {
		// c2 entered while c1 still held: both read 0 and wrote 1.
		List<HoldRecord> records = List.of(hold("c1-t0", 10, 30, 1, Fenced.ACCEPTED), hold("c2-t0", 20, 40, 1, Fenced.ACCEPTED));
		PhaseResult result = check(records, 1, 1);
		assertThat(result.overlaps()).isEqualTo(1);
		assertThat(result.overlapMillis()).isEqualTo(10.0);
		assertThat(result.plainLost()).isEqualTo(1);
		assertThat(result.staleAccepted()).as("a token handed out twice lets a stale write through").isEqualTo(1);
		assertThat(result.tokensOutOfOrder()).isEqualTo(1);
		assertThat(result.violations()).hasSize(4);
	}

	@Test
	void fencingThatRejectsTheStaleHolderLeavesOnlyTheExpectedOverlap() {
		PhaseWindow paused = new PhaseWindow("p", "pause", 0, 1000 * MS, 2000 * MS, 4000 * MS, false, "c1", null);
		List<HoldRecord> records = List.of(hold("c1-t0", 10, 3000, 1, Fenced.REJECTED), hold("c2-t0", 1500, 1510, 2, Fenced.ACCEPTED));
		PhaseResult result = HistoryChecker.check(List.of(paused), records, Map.of("p", Map.of("k0", new Counters(1, 1))), true)
			.get(0);
		assertThat(result.overlaps()).isEqualTo(1);
		assertThat(result.plainLost()).isEqualTo(1);
		assertThat(result.fencedRejected()).isEqualTo(1);
		assertThat(result.staleAccepted()).isZero();
		assertThat(result.violations()).as("overlap and lost plain updates are expected past a lease").isEmpty();
	}

	@Test
	void aNewerHolderWithALowerTokenIsCaughtEvenWhenNoWriteWasLost() {
		// The stale holder wrote first with the higher token; the rightful one was rejected.
		PhaseWindow paused = new PhaseWindow("p", "pause", 0, 1000 * MS, 2000 * MS, 4000 * MS, false, "c1", null);
		List<HoldRecord> records = List.of(hold("c1-t0", 10, 3000, 10, Fenced.ACCEPTED), hold("c2-t0", 1500, 1510, 9, Fenced.REJECTED));
		PhaseResult result = HistoryChecker.check(List.of(paused), records, Map.of("p", Map.of("k0", new Counters(1, 1))), true)
			.get(0);
		assertThat(result.staleAccepted()).isZero();
		assertThat(result.tokensOutOfOrder()).isEqualTo(1);
		assertThat(result.violations()).singleElement().asString().contains("not above");
	}

	@Test
	void aHoldAFrozenClientTookAsTheFreezeBeganIsInDoubtOnlyAgainstHoldersThatBeganDuringTheFreeze() {
		// c1 waited from 900 ms, was frozen from 1000 to 2000 and recorded its hold at 2100: it may have
		// taken the lock before c2 (token 6 at 1500), so its lower token 5 is in doubt; c3's hold from
		// 950 ms had begun before the freeze, and its token 7 above c1's is an offence.
		PhaseWindow paused = new PhaseWindow("p", "pause", 0, 1000 * MS, 2000 * MS, 4000 * MS, false, "c1", null);
		HoldRecord frozen = new HoldRecord("p", "k0", "c1-t0", 900 * MS, 2100 * MS, 2110 * MS, 2000, 5, Outcome.OK, true,
				Fenced.REJECTED);
		PhaseResult inDoubt = HistoryChecker.check(List.of(paused), List.of(frozen, hold("c2-t0", 1500, 1510, 6, Fenced.ACCEPTED)),
				Map.of("p", Map.of("k0", new Counters(2, 1))), true).get(0);
		assertThat(inDoubt.tokensOutOfOrder()).isZero();
		assertThat(inDoubt.tokensInDoubt()).isEqualTo(1);
		assertThat(inDoubt.violations()).isEmpty();
		PhaseResult certain = HistoryChecker.check(List.of(paused), List.of(hold("c3-t0", 950, 960, 7, Fenced.ACCEPTED), frozen),
				Map.of("p", Map.of("k0", new Counters(2, 1))), true).get(0);
		assertThat(certain.tokensOutOfOrder()).isEqualTo(1);
		// Recorded long after the thaw, the hold came from a call made after it: no doubt either.
		HoldRecord late = new HoldRecord("p", "k0", "c1-t0", 900 * MS, 3500 * MS, 3510 * MS, 2000, 5, Outcome.OK, true,
				Fenced.REJECTED);
		assertThat(HistoryChecker.check(List.of(paused), List.of(late, hold("c2-t0", 1500, 1510, 6, Fenced.ACCEPTED)),
				Map.of("p", Map.of("k0", new Counters(2, 1))), true).get(0).tokensOutOfOrder()).isEqualTo(1);
	}

	@Test
	void aRejectedWriteWhereTheLockMustBeExclusiveIsAViolation() {
		List<HoldRecord> records = List.of(hold("c1-t0", 10, 20, 1, Fenced.ACCEPTED), hold("c2-t0", 30, 40, 2, Fenced.REJECTED));
		assertThat(check(records, 2, 1).violations()).singleElement().asString().contains("rejected");
	}

	@Test
	void moreInTheResourceThanRecordedIsAnIncompleteHistory() {
		List<HoldRecord> records = List.of(hold("c1-t0", 10, 20, 1, Fenced.ACCEPTED));
		PhaseResult result = check(records, 3, 1);
		assertThat(result.incomplete()).isEqualTo(2);
		assertThat(result.violations()).singleElement().asString().contains("no record");
	}

	@Test
	void recordsBetweenWindowsAreCounted() {
		HoldRecord outside = hold("c1-t0", 5000, 5010, 1, Fenced.ACCEPTED);
		assertThat(HistoryChecker.unplaced(List.of(this.exclusive), List.of(outside))).isEqualTo(1);
	}

	@Test
	void aCallerFarPastItsWaitIsStuck() {
		HoldRecord stuck = new HoldRecord("-", "k0", "c3-t0", 100 * MS, 100 * MS + HistoryChecker.STUCK_NANOS + 3000 * MS,
				100 * MS + HistoryChecker.STUCK_NANOS + 3000 * MS, 2000, -1, Outcome.NOT_ACQUIRED, false, Fenced.NONE);
		PhaseResult result = check(List.of(stuck), 0, 0);
		assertThat(result.notAcquired()).isEqualTo(1);
		assertThat(result.violations()).singleElement().asString().contains("stuck");
	}

	@Test
	void recordsSurviveTheirLine() {
		HoldRecord record = hold("c1-t7", 1, 2, 42, Fenced.REJECTED);
		assertThat(HoldRecord.parse(record.format())).isEqualTo(record);
		assertThat(record.client()).isEqualTo("c1");
	}

	private PhaseResult check(List<HoldRecord> records, long plain, long fenced) {
		return HistoryChecker.check(List.of(this.exclusive), records, Map.of("p", Map.of("k0", new Counters(plain, fenced))), true)
			.get(0);
	}

	private static HoldRecord hold(String owner, long startMillis, long endMillis, long token, Fenced fenced) {
		return new HoldRecord("p", "k0", owner, startMillis * MS, startMillis * MS, endMillis * MS, 2000, token, Outcome.OK,
				true, fenced);
	}

}
