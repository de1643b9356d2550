package io.distlock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.distlock.InvalidLockSettingException;

class RedlockUrisTest {

	@Test
	void threeDistinctMastersParseInTheOrderListed() {
		RedlockUris nodes = RedlockUris.parse(List.of("redis://a:6379", "redis://b:6379", "redis://c:6379/2"), false);
		assertThat(nodes.size()).isEqualTo(3);
		assertThat(nodes.uris().get(2).getDatabase()).isEqualTo(2);
		assertThat(nodes.shown()).containsExactly("redis://a:6379", "redis://b:6379", "redis://c:6379/2");
	}

	@Test
	void fewerThanThreeMastersAreRefusedShowingTheList() {
		assertThatExceptionOfType(InvalidLockSettingException.class)
			.isThrownBy(() -> RedlockUris.parse(List.of("redis://a:6379", "redis://b:6379"), false))
			.satisfies(ex -> assertThat(ex.getSetting()).isEqualTo("nodes"))
			.withMessageContaining("at least 3")
			.withMessageContaining("redis://b:6379");
	}

	@Test
	void aMasterListedTwiceIsRefusedWhateverTheCaseOfItsHost() {
		assertThatExceptionOfType(InvalidLockSettingException.class)
			.isThrownBy(() -> RedlockUris.parse(List.of("redis://a:6379", "redis://b:6379", "redis://A:6379"), false))
			.withMessageContaining("twice");
	}

	@Test
	void anEntryThatIsNoUriIsNamedByPositionNeverByItsPassword() {
		assertThatExceptionOfType(InvalidLockSettingException.class)
			.isThrownBy(() -> RedlockUris.parse(
					List.of("rediss://u:hunter2@a:6379", "redis://b:6379", "rediss://u:it's,hunter2@c:6379 x"), false))
			.withMessageContaining("entry 3 is not a Redis URI")
			.withMessageContaining("rediss://u:****@a:6379")
			.withMessageNotContaining("hunter2")
			.withNoCause();
	}

	@Test
	void aPlainNodeIsRefusedWhereTheConnectionsUseTls() {
		assertThatExceptionOfType(InvalidLockSettingException.class)
			.isThrownBy(() -> RedlockUris.parse(List.of("rediss://a:6379", "redis://b:6379", "rediss://c:6379"), true))
			.satisfies(ex -> assertThat(ex.getSetting()).isEqualTo("ssl"))
			.withMessageContaining("node redis://b:6379 is not a TLS URI");
	}

}
