package io.distlock.autoconfigure;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;

import io.distlock.LockRegistryStats;

/**
 * The {@code distlock} Actuator endpoint, when Actuator is present and the endpoint is exposed.
 */
@AutoConfiguration(after = DistLockAutoConfiguration.class)
@ConditionalOnClass(ConditionalOnAvailableEndpoint.class)
public class DistLockEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(LockRegistryStats.class)
	@ConditionalOnAvailableEndpoint(endpoint = DistLockEndpoint.class)
	DistLockEndpoint distLockEndpoint(ListableBeanFactory beanFactory, ObjectProvider<LockRegistryStats> defaultStats) {
		return new DistLockEndpoint(new LockRegistries(beanFactory, defaultStats));
	}

}
