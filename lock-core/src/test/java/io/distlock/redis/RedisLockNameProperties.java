package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.DistLock;
import io.distlock.core.LockEngineOptions;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.testing.HostileText;

/**
 * Hostile lock names through {@code LockRegistry.getLock(name)} on a real Redis: each is refused
 * with a message saying why, or is a lock whose key in Redis is exactly the one {@link RedisKeys}
 * names, byte for byte, and which no other name shares.
 */
class RedisLockNameProperties {

	/** Long enough for a loaded machine's round trip; a free lock is taken at once anyway. */
	private static final Duration WAIT = Duration.ofSeconds(2);

	private static RedisServerProcess server;

	private static final List<LettuceConnectionFactory> factories = new ArrayList<>();

	private static RedisLockRegistry first;

	private static RedisLockRegistry second;

	private static final RedisKeys KEYS = new RedisKeys("distlock", false);

	@BeforeContainer
	static void start() {
		server = RedisServerProcess.start();
		first = registry();
		second = registry();
	}

	@AfterContainer
	static void stop() {
		if (first != null) {
			first.close();
			second.close();
		}
		factories.forEach(LettuceConnectionFactory::destroy);
		if (server != null) {
			server.close();
		}
	}

	@Property(tries = 200)
	void aNameIsRefusedClearlyOrLockedUnderItsOwnKey(@ForAll("names") String name) throws InterruptedException {
		DistLock lock;
		try {
			lock = first.getLock(name);
		}
		catch (IllegalArgumentException refused) {
			assertThat(refused).hasMessageContaining("Lock name");
			return;
		}
		assertThat(lock.tryLock(WAIT, Duration.ofSeconds(30))).as("a free lock is taken").isTrue();
		try (RedisConnection connection = factories.get(0).getConnection()) {
			byte[] key = KEYS.lock(name).getBytes(StandardCharsets.UTF_8);
			assertThat(connection.keyCommands().exists(key)).as("the lock's key exists").isTrue();
			assertThat(new String(key, StandardCharsets.UTF_8)).as("the key survives its way to Redis and back")
				.isEqualTo(KEYS.lock(name));
		}
		finally {
			lock.unlock();
		}
	}

	/**
	 * The other name differs by one fragment, or by characters that an encoding might fold into
	 * one ('?' for what UTF-8 cannot say, case, a trailing space).
	 */
	@Property(tries = 200)
	void aLockHeldUnderOneNameLeavesEveryOtherNameFree(@ForAll("names") String name, @ForAll("edits") String edit) throws InterruptedException {
		String other = HostileText.lookalike(name, edit);
		DistLock held;
		DistLock elsewhere;
		try {
			held = first.getLock(name);
			elsewhere = second.getLock(other);
		}
		catch (IllegalArgumentException refused) {
			assertThat(refused).hasMessageContaining("Lock name");
			return;
		}
		if (other.equals(name)) {
			return;
		}
		assertThat(held.tryLock(WAIT, Duration.ofSeconds(30))).isTrue();
		try {
			assertThat(elsewhere.tryLock(WAIT, Duration.ofSeconds(30)))
				.as("'%s' is free while '%s' is held", other, name).isTrue();
			elsewhere.unlock();
		}
		finally {
			held.unlock();
		}
	}

	@Property(tries = 50)
	void nullAndBlankNamesAreRefused(@ForAll("blanks") String name) {
		assertThatThrownBy(() -> first.getLock(name)).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("Lock name must not be null or blank");
	}

	@Provide
	Arbitrary<String> names() {
		return HostileText.any().filter(name -> !name.isBlank());
	}

	@Provide
	Arbitrary<String> edits() {
		return HostileText.lookalikeEdits();
	}

	@Provide
	Arbitrary<String> blanks() {
		return Arbitraries.strings().withChars(" \t\n\r\u000B\f\u001C\u001D\u001E\u001F").ofMaxLength(5).injectNull(0.1);
	}

	private static RedisLockRegistry registry() {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()));
		factory.afterPropertiesSet();
		factory.start();
		factories.add(factory);
		return new RedisLockRegistry(factory, "distlock",
				LockEngineOptions.builder().watchdogTimeout(Duration.ofSeconds(30)).build());
	}

}
