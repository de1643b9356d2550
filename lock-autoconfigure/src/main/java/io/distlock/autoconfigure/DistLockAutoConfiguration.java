package io.distlock.autoconfigure;

import javax.sql.DataSource;

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
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.distlock.LockListener;
import io.distlock.LockRegistry;
import io.distlock.LockRegistryStats;
import io.distlock.LockWatchdog;
import io.distlock.core.LockEngineOptions;
import io.distlock.redis.RedisLockRegistry;
import io.distlock.jdbc.JdbcLockRegistry;
import io.distlock.redlock.RedlockLockRegistry;
import io.distlock.redlock.RedlockUris;
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
	DefaultRegistryCheck distLockDefaultRegistryCheck(DistLockSettings settings, Environment environment,
			ListableBeanFactory beanFactory) {
		return new DefaultRegistryCheck(settings, environment, beanFactory);
	}

	@Bean
	ServerWarningsLog distLockServerWarningsLog(ListableBeanFactory beanFactory,
			ObjectProvider<LockRegistryStats> defaultStats) {
		return new ServerWarningsLog(new LockRegistries(beanFactory, defaultStats));
	}

	/**
	 * The properties adapted to what the registries take; every registry, default or named, is built
	 * from it.
	 * @param properties the bound properties
	 * @return the adapted settings
	 */
	@Bean
	DistLockSettings distLockSettings(DistLockProperties properties) {
		return new DistLockSettings(properties);
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
		RedlockLockRegistry redlockLockRegistry(DistLockSettings settings, ObjectProvider<LockListener> listeners, LockWatchdog watchdog,
				ObjectProvider<SslBundles> sslBundles, ObjectProvider<ClientResources> clientResources,
				ListableBeanFactory beanFactory, ObjectProvider<RedlockConnectionDetails> connectionDetails) {
			DistLockSettings.RegistrySpec spec = settings.defaults();
			// A connection-details bean (masters in Testcontainers, say) replaces the property. Its URIs
			// alone say which nodes use TLS: the bundle's TLS-only rule is about the property's list.
			RedlockConnectionDetails connected = connectionDetails.getIfUnique();
			RedlockUris nodes = (connected != null) ? RedlockUris.parse(connected.nodes(), false) : spec.redlockNodes();
			return RedlockRegistries.create(spec.nodesProperty(), nodes, spec.keyPrefix(), settings,
					settings.engineOptions(spec, listeners, watchdog), sslBundles.getIfAvailable(),
					new RedlockNodeConnections.Customizations(LettuceCustomizers.clients(beanFactory),
							LettuceCustomizers.options(beanFactory), clientResources.getIfUnique()));
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
		RedisLockRegistry redisLockRegistry(RedisConnectionFactory connectionFactory, DistLockSettings settings,
				ObjectProvider<LockListener> listeners, LockWatchdog watchdog) {
			DistLockSettings.RegistrySpec spec = settings.defaults();
			return RedisRegistries.create(spec, connectionFactory, settings.engineOptions(spec, listeners, watchdog),
					settings.replicaAcks());
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
		JdbcLockRegistry jdbcLockRegistry(DataSource dataSource, DistLockSettings settings,
				ObjectProvider<LockListener> listeners, LockWatchdog watchdog) {
			DistLockSettings.RegistrySpec spec = settings.defaults();
			return JdbcRegistries.create(spec, dataSource, settings.engineOptions(spec, listeners, watchdog));
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
				DistLockSettings settings, ObjectProvider<LockListener> listeners, LockWatchdog watchdog) {
			DistLockSettings.RegistrySpec spec = settings.defaults();
			LockEngineOptions options = settings.engineOptions(spec, listeners, watchdog);
			CuratorFramework own = curators.getIfUnique();
			return (own != null) ? ZooKeeperRegistries.create(spec, own, settings.properties().getZookeeper(), options)
					: ZooKeeperRegistries.owning(spec, settings.properties().getZookeeper(), options);
		}

	}

}
