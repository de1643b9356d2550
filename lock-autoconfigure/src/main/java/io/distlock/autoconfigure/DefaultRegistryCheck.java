package io.distlock.autoconfigure;

import static io.distlock.autoconfigure.BackendRequirements.CURATOR_CLASS;
import static io.distlock.autoconfigure.BackendRequirements.CURATOR_DEPENDENCY;
import static io.distlock.autoconfigure.BackendRequirements.LETTUCE_CLASS;
import static io.distlock.autoconfigure.BackendRequirements.LETTUCE_CUSTOMIZER_CLASS;
import static io.distlock.autoconfigure.BackendRequirements.LETTUCE_DEPENDENCY;
import static io.distlock.autoconfigure.BackendRequirements.REDIS_BEAN_ADVICE;
import static io.distlock.autoconfigure.BackendRequirements.REDIS_CLASS;
import static io.distlock.autoconfigure.BackendRequirements.REDIS_DEPENDENCY;

import org.springframework.beans.factory.InitializingBean;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.AbstractBeanDefinition;
import org.springframework.core.env.Environment;

import io.distlock.LockRegistry;
import io.distlock.autoconfigure.DistLockProperties.Backend;

/**
 * Stops start-up when the default registry could not be created, naming what the backend chosen by
 * {@code distlock.backend} lacks (a library, a bean), as Spring Boot's cache auto-configuration does
 * for {@code spring.cache.type}. Each backend's configuration is conditional on what it needs, so
 * without this check a missing piece only showed at the first locked call, as "needs a LockRegistry
 * bean and there is none".
 *
 * <p>With {@code distlock.backend} unset and registries named under {@code distlock.registries},
 * having no default registry is a choice (methods name theirs), and nothing is checked.
 */
final class DefaultRegistryCheck implements InitializingBean {

	private static final String PROPERTY = "distlock.backend";

	private static final String NODES = "distlock.redlock.nodes";

	private final DistLockSettings settings;

	private final Environment environment;

	private final ListableBeanFactory beanFactory;

	private final BackendRequirements requirements;

	DefaultRegistryCheck(DistLockSettings settings, Environment environment, ListableBeanFactory beanFactory) {
		this.settings = settings;
		this.environment = environment;
		this.beanFactory = beanFactory;
		this.requirements = new BackendRequirements(beanFactory);
	}

	@Override
	public void afterPropertiesSet() {
		if (hasDefaultRegistry()) {
			return;
		}
		boolean chosen = this.environment.containsProperty(PROPERTY);
		if (!chosen && this.settings.hasNamedRegistries()) {
			return;
		}
		Backend backend = this.settings.defaults().backend();
		Object shown = chosen ? backend : backend + " (the default)";
		switch (backend) {
			case REDIS -> {
				this.requirements.requireClass(PROPERTY, shown, REDIS_CLASS, REDIS_DEPENDENCY);
				if (this.settings.defaults().redlockNodes() != null) {
					String otherwise = "remove distlock.redlock.nodes to lock on the Redis of spring.data.redis";
					Object nodes = this.settings.defaults().redlockNodes().shown();
					this.requirements.requireClass(NODES, nodes, LETTUCE_CLASS, LETTUCE_DEPENDENCY, otherwise);
					this.requirements.requireClass(NODES, nodes, LETTUCE_CUSTOMIZER_CLASS, REDIS_DEPENDENCY, otherwise);
				}
				else {
					this.requirements.requireBean(PROPERTY, shown, this.requirements.load(REDIS_CLASS), REDIS_BEAN_ADVICE);
				}
			}
			case JDBC -> this.requirements.requireDataSource(PROPERTY);
			case ZOOKEEPER -> this.requirements.requireClass(PROPERTY, shown, CURATOR_CLASS, CURATOR_DEPENDENCY);
		}
	}

	/**
	 * Counts only registries a plain injection gets: a named registry is no default candidate, yet
	 * a lookup by type falls back to it when it is the only one, which would hide a missing default.
	 */
	private boolean hasDefaultRegistry() {
		for (String name : this.beanFactory.getBeanNamesForType(LockRegistry.class, true, false)) {
			if (!(this.beanFactory instanceof ConfigurableListableBeanFactory configurable)
					|| !configurable.containsBeanDefinition(name)
					|| !(configurable.getMergedBeanDefinition(name) instanceof AbstractBeanDefinition definition)
					|| definition.isDefaultCandidate()) {
				return true;
			}
		}
		return false;
	}

}
