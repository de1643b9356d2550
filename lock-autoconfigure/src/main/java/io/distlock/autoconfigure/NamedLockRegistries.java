package io.distlock.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import org.apache.curator.framework.CuratorFramework;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientConfigurationBuilderCustomizer;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientOptionsBuilderCustomizer;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.ClassUtils;

import io.distlock.LockListener;
import io.distlock.LockRegistry;
import io.distlock.LockWatchdog;
import io.distlock.autoconfigure.DistLockProperties.Backend;
import io.distlock.autoconfigure.DistLockProperties.NamedRegistry;
import io.distlock.core.BackendLockRegistry;
import io.distlock.core.LockEngineOptions;
import io.distlock.jdbc.JdbcLockRegistry;
import io.distlock.redis.RedisLockRegistry;
import io.distlock.redlock.RedlockLockRegistry;
import io.distlock.zookeeper.ZooKeeperLockRegistry;
import io.lettuce.core.resource.ClientResources;

/**
 * Registers the registries named under {@code distlock.registries.<name>}: one bean each, under its
 * name, so that {@code @DistributedLock(registry = "<name>")}, metrics, health and the endpoint find
 * it; never a default candidate, so that a plain {@code LockRegistry} injection, and the
 * auto-configured default registry, stay as they are. Each is built when first needed, from the
 * validated {@link DistLockProperties} and the application's own connection factory, DataSource or
 * CuratorFramework bean, or (a Redis registry with {@code redlock-nodes}) Redlock masters of its own;
 * a missing one stops start-up naming the property.
 */
class NamedLockRegistries implements ImportBeanDefinitionRegistrar {

	private static final String PREFIX = "distlock.registries";

	private static final String REDIS_CLASS = "org.springframework.data.redis.connection.RedisConnectionFactory";

	private static final String LETTUCE_CLASS = "io.lettuce.core.RedisClient";

	private static final String LETTUCE_CUSTOMIZER_CLASS =
			"org.springframework.boot.data.redis.autoconfigure.LettuceClientConfigurationBuilderCustomizer";

	private static final String JDBC_CLASS = "org.springframework.jdbc.core.JdbcTemplate";

	private static final String CURATOR_CLASS = "org.apache.curator.framework.CuratorFramework";

	private final Environment environment;

	NamedLockRegistries(Environment environment) {
		this.environment = environment;
	}

	@Override
	public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
		Map<String, NamedRegistry> named = Binder.get(this.environment)
			.bind(PREFIX, Bindable.mapOf(String.class, NamedRegistry.class))
			.orElse(Map.of());
		BeanFactory beanFactory = (BeanFactory) registry;
		named.forEach((name, declared) -> {
			RootBeanDefinition definition = new RootBeanDefinition();
			definition.setTargetType(registryType(declared));
			definition.setInstanceSupplier(() -> create(name, beanFactory));
			definition.setDefaultCandidate(false);
			definition.setDestroyMethodName("close");
			registry.registerBeanDefinition(name, definition);
		});
	}

	/** The concrete type, for lookups by type before the bean exists; loaded only for its backend. */
	private static Class<?> registryType(NamedRegistry declared) {
		Backend backend = declared.getBackend();
		if (backend == null) {
			return BackendLockRegistry.class;
		}
		return switch (backend) {
			case REDIS -> !present(REDIS_CLASS) ? BackendLockRegistry.class
					: declared.getRedlockNodes().isEmpty() ? RedisLockRegistry.class : RedlockLockRegistry.class;
			case JDBC -> present(JDBC_CLASS) ? JdbcLockRegistry.class : BackendLockRegistry.class;
			case ZOOKEEPER -> present(CURATOR_CLASS) ? ZooKeeperLockRegistry.class : BackendLockRegistry.class;
		};
	}

	/** The application's watchdog, which Spring then stops only after this registry. */
	private static LockWatchdog watchdog(String registryName, BeanFactory beanFactory) {
		LockWatchdog watchdog = beanFactory.getBean(LockWatchdog.class);
		if (beanFactory instanceof ConfigurableListableBeanFactory configurable) {
			for (String watchdogName : configurable.getBeanNamesForType(LockWatchdog.class)) {
				configurable.registerDependentBean(watchdogName, registryName);
			}
		}
		return watchdog;
	}

	private static boolean present(String className) {
		return ClassUtils.isPresent(className, NamedLockRegistries.class.getClassLoader());
	}

	private static LockRegistry create(String name, BeanFactory beanFactory) {
		// The properties bean is validated when created: every named registry's settings are checked there.
		DistLockProperties properties = beanFactory.getBean(DistLockProperties.class);
		NamedRegistry declared = properties.getRegistries().get(name);
		String prefix = PREFIX + "." + name;
		ObjectProvider<LockListener> listeners = beanFactory.getBeanProvider(LockListener.class);
		Duration watchdogTimeout = (declared.getWatchdogTimeout() != null) ? declared.getWatchdogTimeout()
				: properties.getWatchdog().getTimeout();
		LockEngineOptions options = DistLockAutoConfiguration.engineOptions(properties, listeners, watchdogTimeout,
				watchdog(name, beanFactory));
		return switch (declared.getBackend()) {
			case REDIS -> {
				requireClass(prefix, Backend.REDIS, REDIS_CLASS, "spring-boot-starter-data-redis");
				yield RedisRegistries.create(prefix, declared, properties, options, beanFactory);
			}
			case JDBC -> {
				requireClass(prefix, Backend.JDBC, JDBC_CLASS, "spring-boot-starter-jdbc");
				yield JdbcRegistries.create(prefix, declared, properties, options, beanFactory);
			}
			case ZOOKEEPER -> {
				requireClass(prefix, Backend.ZOOKEEPER, CURATOR_CLASS, "curator-framework");
				yield ZooKeeperRegistries.create(prefix, declared, properties, options, beanFactory);
			}
		};
	}

	private static void requireClass(String prefix, Backend backend, String className, String dependency) {
		if (!present(className)) {
			throw new InvalidDistLockPropertyException(prefix + ".backend", backend,
					"needs " + className + " on the classpath", "Add " + dependency + ", or choose another backend.");
		}
	}

	/** @return the application's one bean of {@code type}; none or several stops start-up naming the property */
	private static <T> T required(String prefix, Backend backend, BeanFactory beanFactory, Class<T> type, String how) {
		T found = beanFactory.getBeanProvider(type).getIfUnique();
		if (found == null) {
			throw new InvalidDistLockPropertyException(prefix + ".backend", backend,
					"needs exactly one " + type.getSimpleName() + " bean, and the application has none or several",
					"Add one (" + how + "), or choose another backend for this registry.");
		}
		return found;
	}

	/** Loaded only for a Redis registry, so that Spring Data Redis may be absent otherwise. */
	private static final class RedisRegistries {

		static LockRegistry create(String prefix, NamedRegistry declared, DistLockProperties properties,
				LockEngineOptions options, BeanFactory beanFactory) {
			String keyPrefix = (declared.getKeyPrefix() != null) ? declared.getKeyPrefix() : properties.getKeyPrefix();
			if (!declared.getRedlockNodes().isEmpty()) {
				requireClass(prefix, Backend.REDIS, LETTUCE_CLASS, "lettuce-core (Redlock connects its masters with Lettuce)");
				requireClass(prefix, Backend.REDIS, LETTUCE_CUSTOMIZER_CLASS, "spring-boot-data-redis");
				return redlock(prefix, declared.getRedlockNodes(), keyPrefix, properties, options, beanFactory);
			}
			RedisConnectionFactory connectionFactory = required(prefix, Backend.REDIS, beanFactory,
					RedisConnectionFactory.class, "configure spring.data.redis.*");
			return new RedisLockRegistry(connectionFactory, keyPrefix, options);
		}

		/** A Redlock over its own masters, connected as the default Redlock registry connects them. */
		private static LockRegistry redlock(String prefix, List<String> listed, String keyPrefix,
				DistLockProperties properties, LockEngineOptions options, BeanFactory beanFactory) {
			return DistLockAutoConfiguration.RedlockRegistryConfiguration.registry(prefix + ".redlock-nodes", listed,
					keyPrefix, properties, options, beanFactory.getBeanProvider(SslBundles.class).getIfAvailable(),
					new RedlockNodeConnections.Customizations(
							beanFactory.getBeanProvider(LettuceClientConfigurationBuilderCustomizer.class).orderedStream().toList(),
							beanFactory.getBeanProvider(LettuceClientOptionsBuilderCustomizer.class).orderedStream().toList(),
							beanFactory.getBeanProvider(ClientResources.class).getIfUnique()));
		}

	}

	/** Loaded only for a table lock, so that Spring JDBC may be absent otherwise. */
	private static final class JdbcRegistries {

		static LockRegistry create(String prefix, NamedRegistry declared, DistLockProperties properties,
				LockEngineOptions options, BeanFactory beanFactory) {
			DataSource dataSource = required(prefix, Backend.JDBC, beanFactory, DataSource.class,
					"configure spring.datasource.*");
			return DistLockAutoConfiguration.JdbcRegistryConfiguration.registry(dataSource,
					(declared.getTableName() != null) ? declared.getTableName() : properties.getJdbc().getTableName(),
					(declared.getCreateSchema() != null) ? declared.getCreateSchema() : properties.getJdbc().isCreateSchema(),
					options);
		}

	}

	/** Loaded only for a ZooKeeper registry, so that Curator may be absent otherwise. */
	private static final class ZooKeeperRegistries {

		static LockRegistry create(String prefix, NamedRegistry declared, DistLockProperties properties,
				LockEngineOptions options, BeanFactory beanFactory) {
			CuratorFramework curator = DistLockAutoConfiguration.ZooKeeperRegistryConfiguration.started(required(prefix,
					Backend.ZOOKEEPER, beanFactory, CuratorFramework.class, "define a CuratorFramework bean for the ensemble"));
			return new ZooKeeperLockRegistry(curator,
					(declared.getBasePath() != null) ? declared.getBasePath() : properties.getZookeeper().getBasePath(),
					options);
		}

	}

}
