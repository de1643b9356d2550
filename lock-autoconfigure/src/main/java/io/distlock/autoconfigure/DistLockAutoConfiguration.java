package io.distlock.autoconfigure;

import java.time.Duration;
import java.util.List;

import javax.sql.DataSource;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.RetryUntilElapsed;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.LockListener;
import io.distlock.LockRegistry;
import io.distlock.LockWatchdog;
import io.distlock.core.LockEngineOptions;
import io.distlock.redis.RedisLockRegistry;
import io.distlock.jdbc.JdbcLockBackend;
import io.distlock.jdbc.JdbcLockRegistry;
import io.distlock.redlock.RedlockLockRegistry;
import io.distlock.redlock.RedlockNodesException;
import io.distlock.zookeeper.ZooKeeperLockRegistry;
import io.lettuce.core.resource.ClientResources;

/**
 * Creates the {@link LockRegistry}: Redlock when {@code distlock.redlock.nodes} is set, otherwise on
 * the application's own Redis connection factory, so that single-node, Sentinel and Cluster set-ups
 * configured under {@code spring.data.redis.*} just work; or the table lock with
 * {@code distlock.backend=jdbc}; or ZooKeeper with {@code distlock.backend=zookeeper}. Each backend's configuration carries its own class conditions, so the
 * table lock needs no Spring Data Redis; when none applies for want of a library or a bean, the
 * {@link DefaultRegistryCheck} stops start-up naming what to add. Backs off when the application
 * defines its own registry.
 */
@AutoConfiguration(after = SslAutoConfiguration.class,
		afterName = { BootGeneration.DATA_REDIS_AUTO_CONFIGURATION, BootGeneration.DATA_SOURCE_AUTO_CONFIGURATION })
@ConditionalOnProperty(prefix = "distlock", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(DistLockProperties.class)
@Import({ DistLockAutoConfiguration.RedlockRegistryConfiguration.class,
		DistLockAutoConfiguration.RedisRegistryConfiguration.class, DistLockAutoConfiguration.JdbcRegistryConfiguration.class,
		DistLockAutoConfiguration.ZooKeeperRegistryConfiguration.class, NamedLockRegistries.class })
public class DistLockAutoConfiguration {

	private static final Logger log = LoggerFactory.getLogger(DistLockAutoConfiguration.class);

	@Bean
	@ConditionalOnMissingBean
	ApplicationEventLockListener distLockEventPublisher(ApplicationEventPublisher publisher) {
		return new ApplicationEventLockListener(publisher);
	}

	/**
	 * The watchdog every registry renews its leases with, stopped after the registries (each depends
	 * on it). A bean of the application's own, e.g. {@code LockWatchdog.on(scheduler)}, replaces it.
	 * @return the watchdog
	 */
	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	LockWatchdog distLockWatchdog() {
		return LockWatchdog.create();
	}

	@Bean
	DefaultRegistryCheck distLockDefaultRegistryCheck(DistLockProperties properties, Environment environment,
			ListableBeanFactory beanFactory) {
		return new DefaultRegistryCheck(properties, environment, beanFactory);
	}

	static LockEngineOptions engineOptions(DistLockProperties properties, ObjectProvider<LockListener> listeners,
			LockWatchdog watchdog) {
		return engineOptions(properties, listeners, properties.getWatchdog().getTimeout(), watchdog);
	}

	/** As {@link #engineOptions(DistLockProperties, ObjectProvider, LockWatchdog)}, for a registry with a watchdog lease of its own. */
	static LockEngineOptions engineOptions(DistLockProperties properties, ObjectProvider<LockListener> listeners,
			Duration watchdogTimeout, LockWatchdog watchdog) {
		LockEngineOptions.Builder options = LockEngineOptions.builder()
			.watchdogTimeout(watchdogTimeout)
			.watchdog(watchdog)
			.restartGrace(properties.effectiveRestartGrace());
		if (!properties.getWatchdog().isEnabled()) {
			// Validated: distlock.lease-time is set when the watchdog is off.
			options.withoutWatchdog(properties.getLeaseTime());
		}
		listeners.orderedStream().forEach(options::listener);
		return options.build();
	}

	/**
	 * Redlock, when {@code distlock.redlock.nodes} lists the independent masters; it owns one
	 * connection per node.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(value = { RedisConnectionFactory.class, LettuceConnectionFactory.class },
			name = BootGeneration.LETTUCE_CLIENT_CONFIGURATION_CUSTOMIZER)
	@ConditionalOnProperty(prefix = "distlock", name = "backend", havingValue = "redis", matchIfMissing = true)
	@Conditional(RedlockNodesCondition.class)
	static class RedlockRegistryConfiguration {

		@Bean(destroyMethod = "close")
		@ConditionalOnMissingBean(LockRegistry.class)
		RedlockLockRegistry redlockLockRegistry(DistLockProperties properties, ObjectProvider<LockListener> listeners, LockWatchdog watchdog,
				ObjectProvider<SslBundles> sslBundles, ObjectProvider<ClientResources> clientResources,
				ListableBeanFactory beanFactory, ObjectProvider<RedlockConnectionDetails> connectionDetails) {
			// A connection-details bean (masters in Testcontainers, say) replaces the property.
			RedlockConnectionDetails connected = connectionDetails.getIfUnique();
			List<String> listed = (connected != null) ? connected.nodes() : properties.getRedlock().getNodes();
			return registry("distlock.redlock.nodes", listed, properties.getKeyPrefix(), properties,
					engineOptions(properties, listeners, watchdog), sslBundles.getIfAvailable(),
					new RedlockNodeConnections.Customizations(LettuceCustomizers.clients(beanFactory),
							LettuceCustomizers.options(beanFactory), clientResources.getIfUnique()));
		}

		/**
		 * A Redlock over {@code listed}, connected with the {@code distlock.redlock.*} timeouts and TLS
		 * and the application's Lettuce set-up; it owns the connections. Also for registries named in
		 * properties.
		 * @param property where the nodes were listed, for warnings and errors
		 */
		static RedlockLockRegistry registry(String property, List<String> listed, String keyPrefix,
				DistLockProperties properties, LockEngineOptions options, SslBundles sslBundles,
				RedlockNodeConnections.Customizations customizations) {
			if (listed.size() % 2 == 0) {
				log.warn("{} lists {} masters, an even number: a majority of {} needs {} nodes, so it "
						+ "tolerates no more failures than {} nodes would. Use an odd number (3, 5, 7).", property,
						listed.size(), listed.size(), listed.size() / 2 + 1, listed.size() - 1);
			}
			List<LettuceConnectionFactory> nodes = RedlockNodeConnections.create(listed, properties.getRedlock(), sslBundles,
					customizations);
			try {
				return RedlockLockRegistry.owning(nodes, keyPrefix, properties.getRedlock().toSettings(), options);
			}
			catch (RedlockNodesException ex) {
				nodes.forEach(LettuceConnectionFactory::destroy);
				throw new InvalidDistLockPropertyException(property, RedisUriText.redact(listed), ex.getMessage(),
						"Correct the entry named above: its credentials, its TLS trust (distlock.redlock.ssl.bundle), "
								+ "or list each independent master once.", ex);
			}
			catch (RuntimeException ex) {
				nodes.forEach(LettuceConnectionFactory::destroy);
				throw ex;
			}
		}

	}

	/**
	 * A single Redis deployment (standalone, Sentinel or Cluster) through the application's own
	 * connection factory.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(RedisConnectionFactory.class)
	@ConditionalOnProperty(prefix = "distlock", name = "backend", havingValue = "redis", matchIfMissing = true)
	@Conditional(RedlockNodesCondition.Absent.class)
	static class RedisRegistryConfiguration {

		@Bean(destroyMethod = "close")
		@ConditionalOnMissingBean(LockRegistry.class)
		@ConditionalOnSingleCandidate(RedisConnectionFactory.class)
		RedisLockRegistry redisLockRegistry(RedisConnectionFactory connectionFactory, DistLockProperties properties,
				ObjectProvider<LockListener> listeners, LockWatchdog watchdog) {
			return new RedisLockRegistry(connectionFactory, properties.getKeyPrefix(), engineOptions(properties, listeners, watchdog));
		}

	}

	/**
	 * The table lock on the application's DataSource, with {@code distlock.backend=jdbc}.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(prefix = "distlock", name = "backend", havingValue = "jdbc")
	@ConditionalOnClass(name = "org.springframework.jdbc.core.JdbcTemplate")
	static class JdbcRegistryConfiguration {

		@Bean(destroyMethod = "close")
		@ConditionalOnMissingBean(LockRegistry.class)
		@ConditionalOnSingleCandidate(DataSource.class)
		JdbcLockRegistry jdbcLockRegistry(DataSource dataSource, DistLockProperties properties,
				ObjectProvider<LockListener> listeners, LockWatchdog watchdog) {
			return registry("distlock.jdbc", dataSource, properties.getJdbc().getTableName(),
					properties.getJdbc().isCreateSchema(), engineOptions(properties, listeners, watchdog));
		}

		/**
		 * A table lock on {@code tableName}, its tables created first if asked, else checked to exist;
		 * also for named registries.
		 * @param prefix where {@code table-name} and {@code create-schema} were set, for the failure
		 */
		static JdbcLockRegistry registry(String prefix, DataSource dataSource, String tableName, boolean createSchema,
				LockEngineOptions options) {
			JdbcLockBackend backend = new JdbcLockBackend(dataSource, tableName);
			if (createSchema) {
				backend.createSchema();
			}
			else {
				BackendRequirements.requireSchema(prefix, backend, tableName);
			}
			return new JdbcLockRegistry(backend, options);
		}

	}

	/**
	 * The ZooKeeper lock, with {@code distlock.backend=zookeeper}: on the application's own
	 * {@link CuratorFramework} bean if it has exactly one (never closed here), else on a client built
	 * from {@code distlock.zookeeper.*}, which the registry owns and closes.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(prefix = "distlock", name = "backend", havingValue = "zookeeper")
	@ConditionalOnClass(name = "org.apache.curator.framework.CuratorFramework")
	static class ZooKeeperRegistryConfiguration {

		@Bean(destroyMethod = "close")
		@ConditionalOnMissingBean(LockRegistry.class)
		ZooKeeperLockRegistry zooKeeperLockRegistry(ObjectProvider<CuratorFramework> curators,
				DistLockProperties properties, ObjectProvider<LockListener> listeners, LockWatchdog watchdog) {
			DistLockProperties.Zookeeper zookeeper = properties.getZookeeper();
			CuratorFramework own = curators.getIfUnique();
			if (own != null) {
				return new ZooKeeperLockRegistry(started(own), zookeeper.getBasePath(), engineOptions(properties, listeners, watchdog));
			}
			if (zookeeper.getConnectString() == null || zookeeper.getConnectString().isBlank()) {
				throw new InvalidDistLockPropertyException("distlock.zookeeper.connect-string", zookeeper.getConnectString(),
						"must be set with distlock.backend=zookeeper when the application defines no (single) "
								+ "CuratorFramework bean",
						"Set distlock.zookeeper.connect-string to the ensemble, e.g. zk1:2181,zk2:2181,zk3:2181, or "
								+ "define a CuratorFramework bean.");
			}
			int connectionTimeout = (int) zookeeper.getConnectionTimeout().toMillis();
			CuratorFramework client = CuratorFrameworkFactory.builder()
				.connectString(zookeeper.getConnectString())
				.sessionTimeoutMs((int) zookeeper.getSessionTimeout().toMillis())
				.connectionTimeoutMs(connectionTimeout)
				// A lock call retries a lost connection only within the connection timeout, so an
				// unreachable ensemble fails acquisitions in about that time rather than in minutes.
				.retryPolicy(new RetryUntilElapsed(connectionTimeout, 100))
				.build();
			client.start();
			try {
				return ZooKeeperLockRegistry.owning(client, zookeeper.getBasePath(), engineOptions(properties, listeners, watchdog));
			}
			catch (RuntimeException ex) {
				client.close();
				throw ex;
			}
		}


		/**
		 * The application's own client, started if it was declared without {@code initMethod = "start"};
		 * its own bean definition still closes it. Also for named registries.
		 */
		static CuratorFramework started(CuratorFramework own) {
			if (own.getState() == CuratorFrameworkState.LATENT) {
				own.start();
			}
			return own;
		}

	}

}
