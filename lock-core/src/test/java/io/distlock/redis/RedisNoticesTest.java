package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.Test;

import io.distlock.core.LockNotice;

/**
 * What the scripts publish on a lock's channel, read once in the Redis layer into the notices the
 * engine's waiters act on.
 */
class RedisNoticesTest {

	@Test
	void theScriptsMessagesBecomeTypedNotices() {
		assertThat(RedisReleaseSubscriber.notice("released")).isSameAs(LockNotice.RELEASED);
		assertThat(RedisReleaseSubscriber.notice("grant 1732000000000123 c1:7 k3"))
			.isEqualTo(new LockNotice.Granted(1732000000000123L, "c1:7", "k3"));
		assertThat(RedisReleaseSubscriber.notice("c1:w2")).isEqualTo(new LockNotice.Abandoned("c1:w2"));
	}

	@Test
	void aHandOffMessageThatCannotBeReadWakesTheHeadInstead() {
		// The head then asks Redis, which knows; a malformed token must not throw on the subscriber's thread.
		assertThat(RedisReleaseSubscriber.notice("grant x c1:7 k3")).isSameAs(LockNotice.RELEASED);
		assertThat(RedisReleaseSubscriber.notice("grant 5 c1:7")).isSameAs(LockNotice.RELEASED);
	}

	/** A hand-off on a client's own channel names the lock's channel last, which may hold spaces. */
	@Test
	void aHandOffOnAClientChannelNamesTheLocksChannel() {
		assertThat(RedisReleaseSubscriber.grant("grant 5 c1:7 k3 distlock:{a b  c}:released"))
			.isEqualTo(Map.entry("distlock:{a b  c}:released", new LockNotice.Granted(5, "c1:7", "k3")));
		assertThat(RedisReleaseSubscriber.grant("grant 5 c1:7 k3")).as("no lock channel").isNull();
		assertThat(RedisReleaseSubscriber.grant("released a b c d")).isNull();
	}

}
