package io.distlock.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import io.distlock.chaos.ChaosSoak.RunResult;
import io.distlock.chaos.ChaosSoak.Settings;
import io.distlock.chaos.ChaosSoak.Timing;
import io.distlock.chaos.HistoryChecker.PhaseResult;

/**
 * The soak can fail: three real client processes without locking produce overlapping holds, lost
 * updates and stale writes, and the checker reports them; the same processes with distlock's locks,
 * in calm weather, produce none.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ChaosSoakSanityTest {

	private static final Timing BRIEF = new Timing(Duration.ofSeconds(1), Duration.ofSeconds(3), Duration.ofSeconds(1), 1);

	@Test
	void withoutLocksTheCheckerReportsViolations() throws Exception {
		PhaseResult calm = calmPhase(true);
		assertThat(calm.acquisitions()).isGreaterThan(100);
		assertThat(calm.overlaps()).isPositive();
		assertThat(calm.plainLost()).isPositive();
		assertThat(calm.staleAccepted()).isPositive();
		assertThat(calm.tokensOutOfOrder()).as("every section shows token 0").isPositive();
		assertThat(calm.violations()).isNotEmpty();
	}

	@Test
	void withLocksCalmWeatherIsClean() throws Exception {
		PhaseResult calm = calmPhase(false);
		assertThat(calm.acquisitions()).isGreaterThan(100);
		assertThat(calm.fencedAccepted()).isPositive();
		assertThat(calm.fencedRejected()).as("tokens grow with every holder").isZero();
		assertThat(calm.violations()).isEmpty();
	}

	@TempDir
	Path work;

	private PhaseResult calmPhase(boolean sanity) throws Exception {
		List<RunResult> runs = ChaosSoak.run(new Settings(BRIEF, sanity, List.of("redis"), List.of("calm")), this.work,
				phase -> {
				});
		assertThat(runs).singleElement().satisfies(run -> {
			assertThat(run.results()).extracting(result -> result.window().name())
				.containsExactly("warm-up", "calm", "stopping");
			assertThat(run.unplaced()).isZero();
			if (!sanity) {
				assertThat(run.leftovers().stuck()).isEmpty();
				assertThat(SoakReport.violations(runs)).isEmpty();
			}
		});
		return runs.get(0).results().get(1);
	}

}
