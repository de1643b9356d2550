package io.distlock.autoconfigure;

import static io.distlock.autoconfigure.BackendRequirements.CURATOR_CLASS;
import static io.distlock.autoconfigure.BackendRequirements.CURATOR_DEPENDENCY;
import static io.distlock.autoconfigure.BackendRequirements.JDBC_CLASS;
import static io.distlock.autoconfigure.BackendRequirements.JDBC_DEPENDENCY;
import static io.distlock.autoconfigure.BackendRequirements.LETTUCE_CLASS;
import static io.distlock.autoconfigure.BackendRequirements.LETTUCE_CUSTOMIZER_CLASS;
import static io.distlock.autoconfigure.BackendRequirements.LETTUCE_DEPENDENCY;
import static io.distlock.autoconfigure.BackendRequirements.REDIS_CLASS;
import static io.distlock.autoconfigure.BackendRequirements.REDIS_DEPENDENCY;

import java.util.Map;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;
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

	private final Environment environment;

	NamedLockRegistries(Environment environment) {
		this.environment = environment;
	}

	@Override
	public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
		Map<String, NamedRegistry> named = Binder.get(this.environment)
			.bind(PREFIX, Bindable.mapOf(String.class, NamedRegistry.class))
			.orElse(Map.of());
		ListableBeanFactory beanFactory = (ListableBeanFactory) registry;
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

	private static boolean present(String className) {
		return ClassUtils.isPresent(className, NamedLockRegistries.class.getClassLoader());
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

	private static LockRegistry create(String name, ListableBeanFactory beanFactory) {
		// The settings were checked when the properties were bound: every named registry's among them.
		DistLockSettings settings = beanFactory.getBean(DistLockSettings.class);
		DistLockSettings.RegistrySpec spec = settings.registry(name);
		String prefix = spec.prefix();
		BackendRequirements requirements = new BackendRequirements(beanFactory);
		LockEngineOptions options = settings.engineOptions(spec, beanFactory.getBeanProvider(LockListener.class),
				watchdog(name, beanFactory));
		return switch (spec.backend()) {
			case REDIS -> {
				requirements.requireClass(prefix + ".backend", Backend.REDIS, REDIS_CLASS, REDIS_DEPENDENCY);
				yield (spec.redlockNodes() == null) ? RedisRegistries.named(spec, options, settings.replicaAcks(), requirements)
						: Redlock.create(spec, settings, options, beanFactory, requirements);
			}
			case JDBC -> {
				requirements.requireClass(prefix + ".backend", Backend.JDBC, JDBC_CLASS, JDBC_DEPENDENCY);
				yield JdbcRegistries.named(spec, options, requirements);
			}
			case ZOOKEEPER -> {
				requirements.requireClass(prefix + ".backend", Backend.ZOOKEEPER, CURATOR_CLASS, CURATOR_DEPENDENCY);
				yield ZooKeeperRegistries.named(spec, settings.properties().getZookeeper(), options, requirements);
			}
		};
	}

	/** Loaded only for a Redis registry with masters of its own, so that Lettuce may be absent otherwise. */
	private static final class Redlock {

		/** A Redlock over its own masters, connected as the default Redlock registry connects them. */
		static LockRegistry create(DistLockSettings.RegistrySpec spec, DistLockSettings settings,
				LockEngineOptions options, ListableBeanFactory beanFactory, BackendRequirements requirements) {
			String property = spec.nodesProperty();
			String otherwise = "remove " + property + " to lock on the application's own Redis";
			Object shown = spec.redlockNodes().shown();
			requirements.requireClass(property, shown, LETTUCE_CLASS, LETTUCE_DEPENDENCY, otherwise);
			requirements.requireClass(property, shown, LETTUCE_CUSTOMIZER_CLASS, REDIS_DEPENDENCY, otherwise);
			return RedlockRegistries.create(property, spec.redlockNodes(), spec.keyPrefix(), settings, options,
					beanFactory.getBeanProvider(SslBundles.class).getIfAvailable(),
					new RedlockNodeConnections.Customizations(
							LettuceCustomizers.clients(beanFactory), LettuceCustomizers.options(beanFactory),
							beanFactory.getBeanProvider(ClientResources.class).getIfUnique()));
		}

	}

}
