package io.distlock.autoconfigure;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.util.function.SingletonSupplier;

import io.distlock.LockRegistry;
import io.distlock.aop.DistributedLockAdvisor;
import io.distlock.aop.DistributedLockInterceptor;
import io.distlock.aop.DistributedLockObserver;
import io.distlock.aop.LockAttributeSource;
import io.distlock.aop.LockDefaults;
import io.micrometer.observation.ObservationRegistry;

/**
 * Applies {@code @DistributedLock} through three infrastructure beans, as Spring's
 * {@code ProxyTransactionManagementConfiguration} applies {@code @Transactional}: the attribute
 * source (reads each method's annotation once), the interceptor (takes and releases the locks) and
 * the advisor (matches annotated methods). Each can be replaced by a bean of the same type.
 * Registers an auto-proxy creator if the application has none, so that annotated methods never run
 * unlocked merely because AOP auto-proxying was switched off; it proxies classes unless
 * {@code spring.aop.proxy-target-class=false} asks for interface proxies. With an
 * {@link ObservationRegistry} bean, each locked call's wait and hold are observed
 * ({@code distlock.acquire}, {@code distlock.hold}).
 *
 * <p>These beans are created early (auto-proxy creators need the advisor before other beans); they
 * therefore reach the registry and the properties lazily, at the first locked call.
 */
@AutoConfiguration(after = DistLockAutoConfiguration.class)
@ConditionalOnClass(DistributedLockAdvisor.class)
@ConditionalOnProperty(prefix = "distlock", name = "enabled", havingValue = "true", matchIfMissing = true)
@Import(DistLockAopAutoConfiguration.AutoProxyRegistrar.class)
public class DistLockAopAutoConfiguration {

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	@ConditionalOnMissingBean
	static LockAttributeSource distributedLockAttributeSource(BeanFactory beanFactory) {
		return new LockAttributeSource(beanFactory);
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	@ConditionalOnMissingBean
	static DistributedLockInterceptor distributedLockInterceptor(LockAttributeSource distributedLockAttributeSource,
			BeanFactory beanFactory, ObjectProvider<LockRegistry> registry, ObjectProvider<DistLockProperties> properties,
			ObjectProvider<DistributedLockObserver> observers, ObjectProvider<ObservationRegistry> observationRegistry) {
		SingletonSupplier<LockDefaults> defaults = SingletonSupplier.of(() -> {
			DistLockProperties settings = properties.getObject();
			return new LockDefaults(settings.getWaitTime(), settings.getLeaseTime());
		});
		return new DistributedLockInterceptor(distributedLockAttributeSource, registry, defaults, beanFactory,
				SingletonSupplier.of(() -> observers.orderedStream().toList()),
				SingletonSupplier.of(() -> observationRegistry.getIfAvailable(() -> ObservationRegistry.NOOP)));
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	@ConditionalOnMissingBean
	static DistributedLockAdvisor distributedLockAdvisor(LockAttributeSource distributedLockAttributeSource,
			DistributedLockInterceptor distributedLockInterceptor, Environment environment) {
		int order = environment.getProperty("distlock.advisor-order", Integer.class,
				DistLockProperties.DEFAULT_ADVISOR_ORDER);
		return new DistributedLockAdvisor(distributedLockAttributeSource, distributedLockInterceptor, order);
	}

	/**
	 * Registers Spring's infrastructure auto-proxy creator unless a more capable one exists, as
	 * {@code @EnableTransactionManagement} does, proxying classes as Spring Boot does by default.
	 */
	static class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware {

		private Environment environment;

		@Override
		public void setEnvironment(Environment environment) {
			this.environment = environment;
		}

		@Override
		public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
			AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
			if (this.environment.getProperty("spring.aop.proxy-target-class", Boolean.class, true)) {
				AopConfigUtils.forceAutoProxyCreatorToUseClassProxying(registry);
			}
		}

	}

}
