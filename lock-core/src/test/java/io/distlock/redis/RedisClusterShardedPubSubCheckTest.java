package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import io.lettuce.core.RedisCommandExecutionException;

/**
 * How {@link ShardedPubSubCheck} settles when the Cluster does not answer its version check: a user
 * the ACL refuses is refused again every time, a Cluster that is down may come up.
 */
class RedisClusterShardedPubSubCheckTest {

	@Test
	void aCheckRefusedForTheUsersAclSettlesOnClassicPubSubForGood() {
		AtomicInteger asked = new AtomicInteger();
		ShardedPubSubCheck check = new ShardedPubSubCheck(failingWith(asked, new RedisSystemException("Error in execution",
				new RedisCommandExecutionException("NOPERM User locks has no permissions to run the 'info' command"))),
				true, "test cluster");

		assertThat(check.sharded()).isFalse();
		assertThat(check.decided()).isTrue();
		assertThat(check.sharded()).isFalse();
		assertThat(asked).hasValue(1);
	}

	@Test
	void aCheckThatFailsOtherwiseIsNotDecidedAndWaitsBeforeAskingAgain() {
		AtomicInteger asked = new AtomicInteger();
		ShardedPubSubCheck check = new ShardedPubSubCheck(
				failingWith(asked, new RedisSystemException("Connection refused", new IllegalStateException("down"))), true,
				"test cluster");

		assertThat(check.sharded()).isFalse();
		assertThat(check.decided()).isFalse();
		assertThat(check.sharded()).isFalse();
		assertThat(asked).hasValue(1);
	}

	/** A factory whose connections fail as the Cluster would, counting the attempts. */
	private static RedisConnectionFactory failingWith(AtomicInteger asked, RuntimeException failure) {
		return (RedisConnectionFactory) Proxy.newProxyInstance(RedisConnectionFactory.class.getClassLoader(),
				new Class<?>[] { RedisConnectionFactory.class }, (proxy, method, args) -> {
					if (method.getName().equals("getConnection") || method.getName().equals("getClusterConnection")) {
						asked.incrementAndGet();
						throw failure;
					}
					switch (method.getName()) {
						case "equals":
							return proxy == args[0];
						case "hashCode":
							return System.identityHashCode(proxy);
						case "toString":
							return "failing connection factory";
						default:
							break;
					}
					throw new UnsupportedOperationException(method.getName());
				});
	}

}
