package io.distlock.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.integration.redis.util.RedisLockRegistry;

import io.distlock.core.LockEngineOptions;

/**
 * The libraries compared, each configured as its documentation suggests for a single Redis.
 */
final class Contenders {

	private Contenders() {
	}

	static List<Contender> all(String host, int port) {
		List<Contender> all = new java.util.ArrayList<>(List.of(distlock(host, port), redisson(host, port),
				springIntegration(host, port, RedisLockRegistry.RedisLockType.SPIN_LOCK),
				springIntegration(host, port, RedisLockRegistry.RedisLockType.PUB_SUB_LOCK), naive(host, port)));
		if (Boolean.getBoolean("bench.floors")) {
			all.add(scriptFloor(host, port));
		}
		return all;
	}

	static LettuceConnectionFactory connectionFactory(String host, int port) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(host, port));
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	static Contender distlock(String host, int port) {
		return distlock(() -> connectionFactory(host, port));
	}

	/**
	 * @param connections makes each client's own connection factory (a single server's, or a
	 * Cluster's), destroyed with the client
	 * @return distlock on those connections
	 */
	static Contender distlock(java.util.function.Supplier<LettuceConnectionFactory> connections) {
		return distlock("distlock", connections, restartGrace());
	}

	/**
	 * @param name the contender's name in the report
	 * @param connections makes each client's own connection factory, destroyed with the client
	 * @param restartGrace the registry's restart grace
	 * @return distlock on those connections with that grace
	 */
	static Contender distlock(String name, java.util.function.Supplier<LettuceConnectionFactory> connections,
			java.time.Duration restartGrace) {
		return new Contender() {
			public String name() {
				return name;
			}

			public Client newClient() {
				LettuceConnectionFactory factory = connections.get();
				io.distlock.redis.RedisLockRegistry registry = new io.distlock.redis.RedisLockRegistry(factory, "bench",
						LockEngineOptions.builder().restartGrace(restartGrace).build());
				return Client.of(key -> registry.getLock(key), () -> {
					registry.close();
					factory.destroy();
				});
			}
		};
	}

	/**
	 * @return {@code -Dbench.restart-grace} (an ISO-8601 duration): none by default, as the engine's
	 * own default; the starter's default is the watchdog timeout (PT30S), whose restart check costs
	 * Redis a little on every acquisition of a free lock
	 */
	static java.time.Duration restartGrace() {
		String grace = System.getProperty("bench.restart-grace", "");
		return grace.isBlank() ? java.time.Duration.ZERO : java.time.Duration.parse(grace);
	}

	static Contender redisson(String host, int port) {
		return new Contender() {
			public String name() {
				return "redisson";
			}

			public Client newClient() {
				Config config = new Config();
				config.useSingleServer().setAddress("redis://" + host + ":" + port);
				RedissonClient client = Redisson.create(config);
				return Client.of(key -> client.getLock("redisson:" + key), () -> client.shutdown());
			}
		};
	}

	static Contender springIntegration(String host, int port, RedisLockRegistry.RedisLockType type) {
		return springIntegration(() -> connectionFactory(host, port), type);
	}

	/**
	 * @param connections makes each client's own connection factory, destroyed with the client
	 * @param type the registry's lock type
	 * @return Spring Integration's registry on those connections
	 */
	static Contender springIntegration(java.util.function.Supplier<LettuceConnectionFactory> connections,
			RedisLockRegistry.RedisLockType type) {
		return new Contender() {
			public String name() {
				return "spring-" + type.name().toLowerCase(java.util.Locale.ROOT).replace("_lock", "").replace('_', '-');
			}

			public Client newClient() {
				LettuceConnectionFactory factory = connections.get();
				RedisLockRegistry registry = new RedisLockRegistry(factory, springRegistryKey(type), 30_000);
				registry.setRedisLockType(type);
				return Client.of(key -> registry.obtain(key), () -> {
					registry.destroy();
					factory.destroy();
				});
			}
		};
	}

	/**
	 * @param type the lock type
	 * @return the registry key of Spring Integration's registry of that type here; a lock's Redis
	 * key is {@code <registry key>:<name>}, its release channel {@code <registry key>-channel}
	 */
	static String springRegistryKey(RedisLockRegistry.RedisLockType type) {
		return "spring-" + type.name();
	}

	/** The seeds' lock: SET NX PX, 50 ms polling, Lua compare-and-delete. Two round trips a pair. */
	static Contender naive(String host, int port) {
		RedisScript<Long> unlock = script("io/distlock/benchmarks/naive-unlock.lua");
		return throughTemplate("naive", host, port, (redis, key) -> new NaiveLock(redis, unlock, "naive:" + key));
	}

	/** A lock of the harness's own on Spring Data Redis: a template per client, a lock per key. */
	private static Contender throughTemplate(String name, String host, int port,
			java.util.function.BiFunction<StringRedisTemplate, String, Lock> locks) {
		return new Contender() {
			public String name() {
				return name;
			}

			public Client newClient() {
				LettuceConnectionFactory factory = connectionFactory(host, port);
				StringRedisTemplate redis = new StringRedisTemplate(factory);
				return Client.of(key -> locks.apply(redis, key), () -> factory.destroy());
			}
		};
	}

	/**
	 * Not a peer but a floor: the least a reentrant lock kept in a Redis hash runs (a Lua script of
	 * 3 commands to take it, 3 to release it), through the naive lock's client path and with its
	 * polling. Beside the naive lock it shows what a script-based reentrant lock costs before any
	 * guarantee of distlock's (queue, restart grace, re-sent releases) is added. Opt-in:
	 * {@code -Dbench.floors=true}.
	 */
	static Contender scriptFloor(String host, int port) {
		RedisScript<Long> lock = script("io/distlock/benchmarks/floor-lock.lua");
		RedisScript<Long> unlock = script("io/distlock/benchmarks/floor-unlock.lua");
		return throughTemplate("floor-script", host, port,
				(redis, key) -> new ScriptFloorLock(redis, lock, unlock, "floor:" + key));
	}

	/**
	 * Not a peer but a floor: one fair {@link java.util.concurrent.locks.ReentrantLock} per key, shared
	 * by every client of the run (they are all in this JVM). Its hand-off is a thread waking another,
	 * with no lock traffic to any server: the shortest hand-off a distributed lock could have on this
	 * machine under the same critical sections, which still run against Redis. Opt-in:
	 * {@code -Dbench.floors=true}.
	 */
	static Contender jvmFloor() {
		java.util.concurrent.ConcurrentMap<String, Lock> locks = new java.util.concurrent.ConcurrentHashMap<>();
		return new Contender() {
			public String name() {
				return "floor-jvm";
			}

			public Client newClient() {
				return Client.of(key -> locks.computeIfAbsent(key, name -> new java.util.concurrent.locks.ReentrantLock(true)),
						() -> {
						});
			}
		};
	}

	/** Reentrant in Redis (a hash of owner to count), otherwise the naive lock. */
	static final class ScriptFloorLock extends NaiveLock {

		private static final String LEASE_MS = "30000";

		private final RedisScript<Long> lock;

		ScriptFloorLock(StringRedisTemplate redis, RedisScript<Long> lock, RedisScript<Long> unlock, String key) {
			super(redis, unlock, key);
			this.lock = lock;
		}

		@Override
		public boolean tryLock() {
			return Long.valueOf(1).equals(this.redis.execute(this.lock, List.of(this.key), OWNER.get(), LEASE_MS));
		}

	}

	/** Not reentrant, one holder value per thread, as the seed writes it. */
	static class NaiveLock implements Lock {

		static final ThreadLocal<String> OWNER = ThreadLocal.withInitial(() -> UUID.randomUUID().toString());

		final StringRedisTemplate redis;

		private final RedisScript<Long> unlock;

		final String key;

		NaiveLock(StringRedisTemplate redis, RedisScript<Long> unlock, String key) {
			this.redis = redis;
			this.unlock = unlock;
			this.key = key;
		}

		public void lock() {
			while (!tryLock()) {
				try {
					Thread.sleep(50);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IllegalStateException(ex);
				}
			}
		}

		public boolean tryLock() {
			return Boolean.TRUE.equals(this.redis.opsForValue().setIfAbsent(this.key, OWNER.get(), Duration.ofSeconds(30)));
		}

		public void unlock() {
			this.redis.execute(this.unlock, List.of(this.key), OWNER.get());
		}

		public void lockInterruptibly() {
			lock();
		}

		public boolean tryLock(long time, TimeUnit unit) {
			throw new UnsupportedOperationException();
		}

		public Condition newCondition() {
			throw new UnsupportedOperationException();
		}

	}

	/** Read once: a resource-backed script is stat-ed under a lock on every execution. */
	private static RedisScript<Long> script(String resource) {
		try {
			return RedisScript.of(new ClassPathResource(resource).getContentAsString(java.nio.charset.StandardCharsets.UTF_8),
					Long.class);
		}
		catch (java.io.IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
	}

}
