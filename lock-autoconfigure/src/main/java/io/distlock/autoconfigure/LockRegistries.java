package io.distlock.autoconfigure;

import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;

import io.distlock.LockRegistryStats;

/**
 * Every lock registry of the application, by the name metrics, health and the endpoint show:
 * {@value #DEFAULT} for the one a plain {@code LockRegistry} injection gets, the bean name for the
 * others (declared with {@code @Bean(defaultCandidate = false)} and chosen per method with
 * {@code @DistributedLock(registry = ...)}).
 */
public final class LockRegistries {

	/** The name of the application's default registry. */
	public static final String DEFAULT = "default";

	private final ListableBeanFactory beanFactory;

	private final ObjectProvider<LockRegistryStats> defaultStats;

	/**
	 * @param beanFactory where the registries are
	 * @param defaultStats the default registry, as injection by type sees it
	 */
	public LockRegistries(ListableBeanFactory beanFactory, ObjectProvider<LockRegistryStats> defaultStats) {
		this.beanFactory = beanFactory;
		this.defaultStats = defaultStats;
	}

	/** @return the default registry first, then the others by bean name */
	public Map<String, LockRegistryStats> all() {
		Map<String, LockRegistryStats> all = new LinkedHashMap<>();
		LockRegistryStats primary = this.defaultStats.getIfUnique();
		if (primary != null) {
			all.put(DEFAULT, primary);
		}
		// Beans that are not default candidates are left out of injection by type, not out of this.
		this.beanFactory.getBeansOfType(LockRegistryStats.class).forEach((name, stats) -> {
			if (stats != primary) {
				all.put(name, stats);
			}
		});
		return all;
	}

}
