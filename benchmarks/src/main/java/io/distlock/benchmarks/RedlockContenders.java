package io.distlock.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Lock;

import org.redisson.Redisson;
import org.redisson.RedissonMultiLock;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.core.LockEngineOptions;
import io.distlock.embedded.RedisServerProcess;
import io.distlock.redlock.RedlockLockRegistry;
import io.distlock.redlock.RedlockSettings;

/**
 * The Redlock implementations compared: distlock's {@link RedlockLockRegistry} (all masters asked at
 * once) and Redisson's {@code RedissonRedLock} and {@code RedissonMultiLock} over one client per
 * master, as Redisson documents them.
 */
final class RedlockContenders {

	private RedlockContenders() {
	}

	static List<Contender> all(List<RedisServerProcess> masters) {
		return List.of(distlock(masters), redisson(masters, false), redisson(masters, true));
	}

	static Contender distlock(List<RedisServerProcess> masters) {
		return new Contender() {
			public String name() {
				return "distlock";
			}

			public Client newClient() {
				List<LettuceConnectionFactory> nodes = masters.stream()
					.map(master -> Contenders.connectionFactory(master.host(), master.port()))
					.toList();
				RedlockLockRegistry registry = RedlockLockRegistry.owning(nodes, "bench", RedlockSettings.DEFAULTS,
						LockEngineOptions.defaults());
				return Client.of(key -> registry.getLock(key), () -> registry.close());
			}
		};
	}

	/**
	 * Redisson over one client per master: {@code RedissonRedLock} (a majority), or with
	 * {@code multi} its {@code RedissonMultiLock} (every master), which the RedLock extends.
	 */
	static Contender redisson(List<RedisServerProcess> masters, boolean multi) {
		return new Contender() {
			public String name() {
				return multi ? "redisson-multi" : "redisson";
			}

			public Client newClient() {
				List<RedissonClient> clients = new ArrayList<>();
				for (RedisServerProcess master : masters) {
					Config config = new Config();
					config.useSingleServer().setAddress("redis://" + master.host() + ":" + master.port());
					clients.add(Redisson.create(config));
				}
				return Client.of(key -> {
					RLock[] locks = clients.stream().map(client -> client.getLock("redisson:" + key)).toArray(RLock[]::new);
					return multi ? new RedissonMultiLock(locks) : new RedissonRedLock(locks);
				}, () -> clients.forEach(RedissonClient::shutdown));
			}
		};
	}

}
