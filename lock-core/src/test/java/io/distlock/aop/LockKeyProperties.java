package io.distlock.aop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

import io.distlock.HoldInfo;
import io.distlock.LockRegistry;
import io.distlock.annotation.DistributedLock;
import io.distlock.core.LockEngineOptions;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.jdbc.JdbcLockBackend;
import io.distlock.jdbc.JdbcLockRegistry;
import io.distlock.redis.RedisLockRegistry;
import io.distlock.testing.HostileText;

/**
 * Hostile key values through {@code @DistributedLock} on a real lock (Redis; the table lock on H2
 * in memory for its name limit): the method body runs only while the thread holds the lock its key
 * names, and a value that cannot be a key is refused, naming the method, before the body runs.
 */
class LockKeyProperties {

	private static RedisServerProcess server;

	private static LettuceConnectionFactory factory;

	private static RedisLockRegistry registry;

	private static Keys keys;

	private static HikariDataSource dataSource;

	private static JdbcLockRegistry table;

	@BeforeContainer
	static void start() {
		server = RedisServerProcess.start();
		factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(server.host(), server.port()));
		factory.afterPropertiesSet();
		factory.start();
		LockEngineOptions options = LockEngineOptions.builder().watchdogTimeout(Duration.ofSeconds(30)).build();
		registry = new RedisLockRegistry(factory, "distlock", options);
		keys = proxy(new Keys(), registry);
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl("jdbc:h2:mem:lock-keys;DB_CLOSE_DELAY=-1");
		config.setMaximumPoolSize(4);
		dataSource = new HikariDataSource(config);
		JdbcLockBackend backend = new JdbcLockBackend(dataSource, JdbcLockRegistry.DEFAULT_TABLE_NAME);
		backend.createSchema();
		table = new JdbcLockRegistry(backend, options);
	}

	@AfterContainer
	static void stop() {
		for (AutoCloseable closeable : new AutoCloseable[] { registry, table, dataSource, factory::destroy, server }) {
			try {
				if (closeable != null) {
					closeable.close();
				}
			}
			catch (Exception ex) {
				// Closing the rest matters more.
			}
		}
	}

	@Property(tries = 200)
	void theBodyRunsOnlyUnderTheLockItsKeyNames(@ForAll("values") Object value) {
		for (String expression : List.of("plain", "prefixed", "named")) {
			List<List<String>> seen = new ArrayList<>();
			try {
				switch (expression) {
					case "plain" -> keys.plain(value, seen);
					case "prefixed" -> keys.prefixed(value, seen);
					default -> keys.named(value, seen);
				}
			}
			catch (IllegalArgumentException refused) {
				assertThat(seen).as("runs of the body before '%s' was refused", value).isEmpty();
				assertThat(refused.getMessage()).as("why %s was refused", describe(value)).contains("Keys." + expression);
				continue;
			}
			assertThat(seen).as("runs of the body").hasSize(1);
			String name = seen.get(0).get(0);
			if (value instanceof String text) {
				// A string is its own key: two different strings are never one lock.
				String expected = switch (expression) {
					case "plain" -> text;
					case "prefixed" -> "order:" + text;
					default -> "orders:" + text;
				};
				assertThat(name).isEqualTo(expected);
			}
			assertThat(registry.heldLocks()).as("locks held after the method returned").isEmpty();
		}
	}

	@Property(tries = 100)
	void severalKeysAreAllHeldAndSorted(@ForAll("strings") String a, @ForAll("strings") String b) {
		List<List<String>> seen = new ArrayList<>();
		try {
			keys.transfer(a, b, seen);
		}
		catch (IllegalArgumentException refused) {
			assertThat(seen).isEmpty();
			assertThat(refused.getMessage()).contains("Keys.transfer");
			return;
		}
		Set<String> expected = new TreeSet<>(List.of("acct:" + a, "acct:" + b));
		assertThat(seen).containsExactly(List.copyOf(expected));
	}

	@Property(tries = 20)
	void aKeyTooLongForTheTableIsRefusedNamingTheMethod(@ForAll("hugeStrings") String value) {
		Keys onTable = proxy(new Keys(), table);
		List<List<String>> seen = new ArrayList<>();
		assertThatThrownBy(() -> onTable.prefixed(value, seen)).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("Keys.prefixed")
			.hasMessageContaining("255");
		assertThat(seen).isEmpty();
	}

	@Provide
	Arbitrary<String> hugeStrings() {
		// Well-formed text only: a key with an unpaired surrogate is refused earlier, for that reason.
		return HostileText.huge().filter(text -> !text.isBlank() && wellFormed(text));
	}

	private static boolean wellFormed(String text) {
		return java.nio.charset.StandardCharsets.UTF_8.newEncoder().canEncode(text);
	}

	@Provide
	Arbitrary<Object> values() {
		Arbitrary<String> text = HostileText.any();
		return Arbitraries.oneOf(text.map(Object.class::cast), Arbitraries.just(null),
				Arbitraries.integers().map(Object.class::cast), text.list().ofMaxSize(3).map(Object.class::cast),
				text.array(String[].class).ofMaxSize(3).map(Object.class::cast),
				Arbitraries.integers().array(int[].class).ofMaxSize(3).map(Object.class::cast),
				text.map(NoText::new).map(Object.class::cast), text.map(Order::new).map(Object.class::cast),
				text.map(t -> Map.of("k", new NoText(t))).map(Object.class::cast),
				text.map(t -> List.of(t, new NoText(t))).map(Object.class::cast));
	}

	@Provide
	Arbitrary<String> strings() {
		return HostileText.any().injectNull(0.05);
	}

	private static String describe(Object value) {
		if (value == null) {
			return "null";
		}
		String text = value.getClass().isArray() ? Arrays.deepToString(new Object[] { value }) : String.valueOf(value);
		return value.getClass().getSimpleName() + " " + text.codePoints()
			.limit(60)
			.mapToObj(c -> (c < 0x20 || c > 0x7e) ? String.format("\\u%04X", c) : Character.toString(c))
			.collect(Collectors.joining());
	}

	private static Keys proxy(Keys target, LockRegistry registry) {
		target.registry = registry;
		StaticListableBeanFactory beans = new StaticListableBeanFactory(Map.of("lockRegistry", registry));
		LockAttributeSource attributes = new LockAttributeSource(beans);
		DistributedLockInterceptor interceptor = new DistributedLockInterceptor(attributes,
				beans.getBeanProvider(LockRegistry.class), () -> new LockDefaults(Duration.ofSeconds(2), null), beans);
		ProxyFactory proxies = new ProxyFactory(target);
		proxies.setProxyTargetClass(true);
		proxies.addAdvisor(new DistributedLockAdvisor(attributes, interceptor, 0));
		return (Keys) proxies.getProxy();
	}

	/** Records, in each run of a body, which locks its thread holds. */
	static class Keys {

		LockRegistry registry;

		@DistributedLock(key = "#value")
		public void plain(Object value, List<List<String>> seen) {
			seen.add(held());
		}

		@DistributedLock(key = "'order:' + #value")
		public void prefixed(Object value, List<List<String>> seen) {
			seen.add(held());
		}

		@DistributedLock(name = "orders", key = "#value")
		public void named(Object value, List<List<String>> seen) {
			seen.add(held());
		}

		@DistributedLock(key = { "'acct:' + #from", "'acct:' + #to" })
		public void transfer(String from, String to, List<List<String>> seen) {
			seen.add(held());
		}

		private List<String> held() {
			LockRegistry registry = this.registry;
			List<String> names = registry.heldLocks().stream().map(HoldInfo::lockName).sorted().toList();
			for (String name : names) {
				assertThat(registry.getLock(name).isHeldByCurrentThread()).as("'%s' held by the body's thread", name)
					.isTrue();
			}
			assertThat(names).as("locks held while the body runs").isNotEmpty();
			return names;
		}

	}

	/** A value without a string form of its own. */
	static final class NoText {

		final String id;

		NoText(String id) {
			this.id = id;
		}

	}

	/** A value with one. */
	record Order(String id) {
	}

}
