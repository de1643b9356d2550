package io.distlock.autoconfigure;

import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.core.LockEngineOptions;
import io.distlock.redlock.RedlockLockRegistry;
import io.distlock.redlock.RedlockNodesException;
import io.distlock.redlock.RedlockUris;

/**
 * Builds a Redlock registry over its own masters, the default one and the named ones alike; it owns
 * the connections. Loaded only where Spring Data Redis and Lettuce are present.
 */
final class RedlockRegistries {

	private static final Logger log = LoggerFactory.getLogger(RedlockRegistries.class);

	private RedlockRegistries() {
	}

	/**
	 * A Redlock over {@code nodes}, connected with the {@code distlock.redlock.*} timeouts and TLS and
	 * the application's Lettuce set-up.
	 * @param property where the nodes were listed, for warnings and errors
	 * @param nodes the masters, parsed
	 * @param keyPrefix the prefix of the registry's keys
	 * @param settings the adapted properties: Redlock's tuning and TLS
	 * @param options the engine's options
	 * @param sslBundles the application's SSL bundles, or {@code null} if there are none
	 * @param customizations what the application's Lettuce set-up adds to every connection
	 * @return the registry
	 */
	static RedlockLockRegistry create(String property, RedlockUris nodes, String keyPrefix, DistLockSettings settings,
			LockEngineOptions options, SslBundles sslBundles, RedlockNodeConnections.Customizations customizations) {
		int masters = nodes.size();
		if (masters % 2 == 0) {
			log.warn("{} lists {} masters, an even number: a majority of {} needs {} nodes, so it "
					+ "tolerates no more failures than {} nodes would. Use an odd number (3, 5, 7).", property, masters,
					masters, masters / 2 + 1, masters - 1);
		}
		DistLockProperties.Redlock redlock = settings.properties().getRedlock();
		List<LettuceConnectionFactory> connections = RedlockNodeConnections.create(nodes.uris(), redlock.getNodeTimeout(),
				redlock.getSsl().getBundle(), sslBundles, customizations);
		try {
			return RedlockLockRegistry.owning(connections, keyPrefix, settings.redlockSettings(), options);
		}
		catch (RedlockNodesException ex) {
			connections.forEach(LettuceConnectionFactory::destroy);
			throw new InvalidDistLockPropertyException(property, nodes.shown(), ex.getMessage(),
					"Correct the entry named above: its credentials, its TLS trust (distlock.redlock.ssl.bundle), "
							+ "or list each independent master once.", ex);
		}
		catch (RuntimeException ex) {
			connections.forEach(LettuceConnectionFactory::destroy);
			throw ex;
		}
	}

}
