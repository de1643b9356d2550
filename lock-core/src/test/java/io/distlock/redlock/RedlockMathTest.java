package io.distlock.redlock;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;

class RedlockMathTest {

	@Test
	void quorumIsAStrictMajority() {
		assertThat(RedlockMath.quorum(3)).isEqualTo(2);
		assertThat(RedlockMath.quorum(4)).isEqualTo(3);
		assertThat(RedlockMath.quorum(5)).isEqualTo(3);
		assertThat(RedlockMath.quorum(7)).isEqualTo(4);
	}

	@Test
	void driftIsAShareOfTheLeasePlusTwoMilliseconds() {
		assertThat(RedlockMath.drift(Duration.ofSeconds(10), 0.01)).isEqualTo(Duration.ofMillis(102));
		assertThat(RedlockMath.drift(Duration.ofSeconds(30), 0)).isEqualTo(Duration.ofMillis(2));
	}

	@Test
	void validityIsLeaseLessElapsedLessDrift() {
		assertThat(RedlockMath.validity(Duration.ofSeconds(10), Duration.ofMillis(40), 0.01)).isEqualTo(Duration.ofMillis(9858));
	}

	@Test
	void anAcquisitionSlowerThanItsLeaseHasNoValidity() {
		assertThat(RedlockMath.validity(Duration.ofMillis(100), Duration.ofMillis(99), 0.01)).isNegative();
		assertThat(RedlockMath.validity(Duration.ofMillis(100), Duration.ofMillis(97), 0.01)).isZero();
	}

}
