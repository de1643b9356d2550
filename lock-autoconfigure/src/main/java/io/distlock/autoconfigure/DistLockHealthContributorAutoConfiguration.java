package io.distlock.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;

import io.distlock.LockRegistryStats;

/**
 * The {@code distlock} health indicator, when Spring Boot's health support is present.
 */
@AutoConfiguration(after = DistLockAutoConfiguration.class)
@ConditionalOnClass(name = BootGeneration.HEALTH_INDICATOR)
@ConditionalOnEnabledDistLockHealth
public class DistLockHealthContributorAutoConfiguration {

	@Bean(name = "distlockHealthIndicator")
	@ConditionalOnMissingBean(name = "distlockHealthIndicator")
	@ConditionalOnBean(LockRegistryStats.class)
	DistLockHealthIndicator distlockHealthIndicator(ListableBeanFactory beanFactory,
			ObjectProvider<LockRegistryStats> defaultStats, ObjectProvider<DistLockProperties> properties) {
		DistLockProperties.Health health = properties.getIfAvailable(DistLockProperties::new).getHealth();
		return new DistLockHealthIndicator(new LockRegistries(beanFactory, defaultStats), health.getTimeout());
	}

}
